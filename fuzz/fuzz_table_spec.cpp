// Table specs (harness/table_spec.hpp): rows, columns, metric paths, figure, paper numbers;
// then what `kvbench table` does with an accepted spec: each cell's job and metric, the grids.
// fuzz-sources: harness/table_spec.cpp harness/table_grids.cpp harness/output_escaping.cpp harness/plain_name.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// fuzz-prebuilt
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "datasets/json_parse.hpp"
#include "harness/table_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const nlohmann::json j =
        kvbench::datasets::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "table.json");
    const kvbench::harness::TableSpec spec = kvbench::harness::parse_table_spec(j, "table.json");
    for (size_t r = 0; r < spec.rows.size(); ++r)
      for (size_t c = 0; c < spec.columns.size(); ++c) {
        (void)kvbench::harness::cell_job(spec, r, c);
        (void)kvbench::harness::cell_metric(spec, r, c);
      }
    (void)kvbench::harness::table_grids(spec);
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {  // DataError
  }
  return 0;
}
