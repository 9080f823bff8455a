#include "tensorio/torch_file.hpp"

#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

#include "tensorio/mapped_file.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

using Kind = PickleValue::Kind;

// An unsigned little-endian integer of `width` bytes at `p` (the caller checked the bounds).
uint64_t little_endian(const uint8_t* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// ---- The zip archive: stored (uncompressed) entries, as torch's PyTorchStreamWriter writes them.

struct Entry {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

class Archive {
 public:
  explicit Archive(const MappedFile& file) : path_(file.path()), bytes_(file.data()), size_(file.size()) { read_directory(); }

  const Entry* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  [[noreturn]] void fail(const std::string& what) const { throw ModelLoadError(path_, "torch.save archive: " + what); }

 private:
  uint64_t read(uint64_t at, int width) const {
    if (at > size_ || static_cast<uint64_t>(width) > size_ - at) fail("a record runs past the end of the file");
    return little_endian(bytes_ + at, width);
  }

  void read_directory() {
    constexpr uint64_t kEnd = 0x06054b50, kEnd64 = 0x06064b50, kLocator64 = 0x07064b50, kCentral = 0x02014b50, kLocal = 0x04034b50;
    if (size_ < 22) fail("not a zip archive (too short; torch.save's legacy format is not read: save it with torch >= 1.6)");
    uint64_t end = size_ - 22;
    const uint64_t lowest = size_ > 22 + 65535 ? size_ - 22 - 65535 : 0;
    while (read(end, 4) != kEnd) {
      if (end == lowest) fail("not a zip archive (no end of central directory; torch.save's legacy format is not read)");
      --end;
    }
    uint64_t count = read(end + 10, 2), directory_size = read(end + 12, 4), directory = read(end + 16, 4);
    if ((count == 0xffff || directory_size == 0xffffffff || directory == 0xffffffff) && end >= 20 && read(end - 20, 4) == kLocator64) {
      const uint64_t end64 = read(end - 20 + 8, 8);
      if (read(end64, 4) != kEnd64) fail("the zip64 locator points at no zip64 end record");
      count = read(end64 + 32, 8), directory_size = read(end64 + 40, 8), directory = read(end64 + 48, 8);
    }
    if (directory > size_ || directory_size > size_ - directory) fail("the central directory lies outside the file");
    uint64_t at = directory;
    for (uint64_t i = 0; i < count; ++i) {
      if (read(at, 4) != kCentral) fail("central directory entry " + std::to_string(i) + " has a bad signature");
      const uint64_t method = read(at + 10, 2), name_length = read(at + 28, 2), extra_length = read(at + 30, 2),
                     comment_length = read(at + 32, 2);
      uint64_t compressed = read(at + 20, 4), uncompressed = read(at + 24, 4), local = read(at + 42, 4);
      if (name_length > size_ - at - 46) fail("a central directory name runs past the end of the file");
      const std::string name(reinterpret_cast<const char*>(bytes_ + at + 46), name_length);
      // zip64 extended information: the 8-byte values of the fields that are 0xffffffff, in order.
      for (uint64_t x = at + 46 + name_length, x_end = x + extra_length; x + 4 <= x_end;) {
        const uint64_t id = read(x, 2), length = read(x + 2, 2);
        if (id == 1) {
          uint64_t field = x + 4;
          for (uint64_t* value : {&uncompressed, &compressed, &local})
            if (*value == 0xffffffff) *value = read(field, 8), field += 8;
        }
        x += 4 + length;
      }
      if (method != 0) fail("entry '" + name + "' is compressed (method " + std::to_string(method) + "); torch.save stores its entries");
      if (compressed != uncompressed) fail("entry '" + name + "': stored sizes differ");
      if (read(local, 4) != kLocal) fail("entry '" + name + "': no local header where the directory says");
      const uint64_t data = local + 30 + read(local + 26, 2) + read(local + 28, 2);
      if (data > size_ || uncompressed > size_ - data) fail("entry '" + name + "' runs past the end of the file");
      entries_[name] = {bytes_ + data, uncompressed};
      at += 46 + name_length + extra_length + comment_length;
    }
  }

  std::string path_;
  const uint8_t* bytes_;
  uint64_t size_;
  std::map<std::string, Entry> entries_;
};

// ---- The unpickler: pickle's opcodes up to protocol 5 that torch.save and NumPy emit; globals are
// names, never code.

PickleRef make(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

torch::ScalarType storage_dtype(const std::string& type, const Archive& archive) {
  static const std::pair<const char*, torch::ScalarType> table[] = {
      {"torch.FloatStorage", torch::kFloat32}, {"torch.DoubleStorage", torch::kFloat64}, {"torch.HalfStorage", torch::kFloat16},
      {"torch.BFloat16Storage", torch::kBFloat16}, {"torch.LongStorage", torch::kInt64}, {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16}, {"torch.CharStorage", torch::kInt8}, {"torch.ByteStorage", torch::kUInt8},
      {"torch.BoolStorage", torch::kBool}, {"torch.UntypedStorage", torch::kUInt8}};
  for (const auto& [name, dtype] : table)
    if (type == name) return dtype;
  archive.fail("storage type '" + type + "' is not one kvbench reads");
}

class Unpickler {
 public:
  Unpickler(const Archive& archive, const Entry& pickle, std::string prefix)
      : archive_(archive), begin_(pickle.data), p_(pickle.data), end_(pickle.data + pickle.size), prefix_(std::move(prefix)) {}

  PickleRef run() {
    while (true) {
      const uint8_t op = byte();
      switch (op) {
        case 0x80: byte(); break;                // PROTO
        case 0x95: bytes(8); break;              // FRAME
        case '.': return pop();                  // STOP
        case '(': marks_.push_back(stack_.size()); break;
        case '}': push(make(Kind::kDict)); break;
        case ']': push(make(Kind::kList)); break;
        case ')': push(make(Kind::kTuple)); break;
        case 'N': push(make(Kind::kNone)); break;
        case 0x88: case 0x89: {                   // NEWTRUE, NEWFALSE
          PickleRef v = make(Kind::kBool);
          v->boolean = op == 0x88;
          push(v);
          break;
        }
        case 'K': push_int(static_cast<int64_t>(little(1))); break;
        case 'M': push_int(static_cast<int64_t>(little(2))); break;
        case 'J': push_int(static_cast<int32_t>(little(4))); break;
        case 0x8a: {                              // LONG1
          const uint64_t n = little(1);
          if (n > 8) fail("an integer wider than 64 bits");
          uint64_t v = n ? little(static_cast<int>(n)) : 0;
          if (n && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
          push_int(static_cast<int64_t>(v));
          break;
        }
        case 'G': {                               // BINFLOAT, big-endian
          uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = (bits << 8) | byte();
          PickleRef v = make(Kind::kFloat);
          std::memcpy(&v->number, &bits, sizeof bits);
          push(v);
          break;
        }
        case 'X': push_text(little(4)); break;    // BINUNICODE
        case 0x8c: push_text(little(1)); break;   // SHORT_BINUNICODE
        case 0x8d: push_text(little(8)); break;   // BINUNICODE8
        case 'T': push_text(little(4)); break;    // BINSTRING
        case 'U': push_text(little(1)); break;    // SHORT_BINSTRING
        case 'B': push_text(little(4)); break;    // BINBYTES
        case 'C': push_text(little(1)); break;    // SHORT_BINBYTES
        case 0x8e: push_text(little(8)); break;   // BINBYTES8
        case 'c': {                               // GLOBAL "module\nname\n"
          const std::string module = line(), name = line();
          push_global(module + "." + name);
          break;
        }
        case 0x93: {                              // STACK_GLOBAL
          const PickleRef name = pop(), module = pop();
          if (name->kind != Kind::kString || module->kind != Kind::kString) fail("STACK_GLOBAL without strings");
          push_global(module->text + "." + name->text);
          break;
        }
        case 'q': memo(little(1)); break;         // BINPUT
        case 'r': memo(little(4)); break;         // LONG_BINPUT
        case 0x94: memo(memo_.size()); break;     // MEMOIZE
        case 'h': recall(little(1)); break;       // BINGET
        case 'j': recall(little(4)); break;       // LONG_BINGET
        case 't': push(tuple_of(since_mark())); break;
        case 0x85: case 0x86: case 0x87: {        // TUPLE1..3
          std::vector<PickleRef> items(op - 0x84);
          for (size_t i = items.size(); i-- > 0;) items[i] = pop();
          push(tuple_of(std::move(items)));
          break;
        }
        case 'a': {                               // APPEND
          PickleRef v = pop();
          list_top()->items.push_back(std::move(v));
          break;
        }
        case 'e': {                               // APPENDS
          std::vector<PickleRef> items = since_mark();
          PickleRef& list = list_top();
          list->items.insert(list->items.end(), items.begin(), items.end());
          break;
        }
        case 's': {                               // SETITEM
          PickleRef value = pop(), key = pop();
          set_items(top(), {std::move(key), std::move(value)});
          break;
        }
        case 'u': set_items(nullptr, since_mark()); break;  // SETITEMS
        case 'Q': {                               // BINPERSID
          PickleRef id = pop();
          push(storage(*id));
          break;
        }
        case 'R': {                               // REDUCE
          PickleRef args = pop(), callable = pop();
          push(call(*callable, *args));
          break;
        }
        case 0x81: {                              // NEWOBJ
          PickleRef args = pop(), cls = pop();
          push(call(*cls, *args));
          break;
        }
        case 'b': pop(); break;                   // BUILD: the state of an object kvbench keeps opaque
        default: fail("opcode 0x" + hex(op) + " is not one kvbench reads");
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    archive_.fail(prefix_ + "data.pkl at byte " + std::to_string(p_ - begin_) + ": " + what);
  }
  static std::string hex(uint8_t b) {
    static const char* digits = "0123456789abcdef";
    return {digits[b >> 4], digits[b & 15]};
  }
  uint8_t byte() {
    if (p_ == end_) fail("the pickle ends before STOP");
    return *p_++;
  }
  const uint8_t* bytes(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) fail("a length runs past the end of the pickle");
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  uint64_t little(int width) { return little_endian(bytes(width), width); }
  std::string line() {
    const uint8_t* start = p_;
    while (byte() != '\n') {
    }
    return std::string(reinterpret_cast<const char*>(start), p_ - start - 1);
  }

  void push(PickleRef v) { stack_.push_back(std::move(v)); }
  PickleRef pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("the stack is empty");
    PickleRef v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PickleRef& top() {
    if (stack_.empty()) fail("the stack is empty");
    return stack_.back();
  }
  PickleRef& list_top() {
    PickleRef& list = top();
    if (list->kind != Kind::kList) fail(std::string("APPEND to a ") + PickleValue::kind_name(list->kind));
    return list;
  }
  std::vector<PickleRef> since_mark() {
    if (marks_.empty()) fail("no MARK");
    std::vector<PickleRef> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  void push_int(int64_t value) {
    PickleRef v = make(Kind::kInt);
    v->integer = value;
    push(v);
  }
  void push_text(uint64_t length) {
    PickleRef v = make(Kind::kString);
    const uint8_t* b = bytes(length);
    v->text.assign(reinterpret_cast<const char*>(b), length);
    push(v);
  }
  void push_global(const std::string& name) {
    PickleRef v = make(Kind::kGlobal);
    v->text = name;
    push(v);
  }
  void memo(uint64_t index) { memo_[index] = top(); }
  void recall(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail("memo index " + std::to_string(index) + " was never stored");
    push(it->second);
  }
  static PickleRef tuple_of(std::vector<PickleRef> items) {
    PickleRef v = make(Kind::kTuple);
    v->items = std::move(items);
    return v;
  }
  // SETITEM(S) onto the dict below the pairs (SETITEMS: below the mark).
  void set_items(PickleRef dict, std::vector<PickleRef> pairs) {
    if (!dict) dict = top();
    if (pairs.size() % 2) fail("SETITEMS with an odd number of items");
    if (dict->kind == Kind::kOpaque) return;  // an opaque object's items stay opaque
    if (dict->kind != Kind::kDict) fail(std::string("SETITEM on a ") + PickleValue::kind_name(dict->kind));
    for (size_t i = 0; i < pairs.size(); i += 2) dict->entries.emplace_back(pairs[i], pairs[i + 1]);
  }

  // A persistent id ('storage', type, key, location, numel): the archive's data/<key>, typed.
  PickleRef storage(const PickleValue& id) {
    if (id.kind != Kind::kTuple || id.items.size() != 5 || id.items[0]->text != "storage" || id.items[1]->kind != Kind::kGlobal ||
        id.items[2]->kind != Kind::kString || id.items[4]->kind != Kind::kInt)
      fail("a persistent id that is not ('storage', type, key, location, numel)");
    const std::string& key = id.items[2]->text;
    auto cached = storages_.find(key);
    if (cached != storages_.end()) return cached->second;
    const torch::ScalarType dtype = storage_dtype(id.items[1]->text, archive_);
    const Entry* entry = archive_.find(prefix_ + "data/" + key);
    if (!entry) fail("storage '" + key + "' has no entry " + prefix_ + "data/" + key);
    const int64_t numel = id.items[4]->integer, element = static_cast<int64_t>(c10::elementSize(dtype));
    if (numel < 0 || static_cast<uint64_t>(numel) > entry->size / element)
      fail("storage '" + key + "' claims " + std::to_string(numel) + " elements, its entry holds " + std::to_string(entry->size / element));
    PickleRef v = make(Kind::kTensor);
    v->tensor = torch::empty({numel}, dtype);
    if (numel > 0) std::memcpy(v->tensor.data_ptr(), entry->data, static_cast<size_t>(numel * element));
    storages_[key] = v;
    return v;
  }

  static std::vector<int64_t> integers(const PickleValue& tuple, const char* what, const Unpickler& self) {
    if (tuple.kind != Kind::kTuple) self.fail(std::string("a tensor's ") + what + " is not a tuple");
    std::vector<int64_t> out;
    for (const PickleRef& v : tuple.items) {
      if (v->kind != Kind::kInt || v->integer < 0) self.fail(std::string("a tensor's ") + what + " holds a non-integer or a negative");
      out.push_back(v->integer);
    }
    return out;
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]): the view,
  // checked to lie inside its storage, copied.
  PickleRef rebuild_tensor(const PickleValue& args) {
    if (args.kind != Kind::kTuple || args.items.size() < 4 || args.items[0]->kind != Kind::kTensor || args.items[1]->kind != Kind::kInt)
      fail("_rebuild_tensor_v2 with arguments that are not (storage, offset, size, stride, ...)");
    const torch::Tensor& storage = args.items[0]->tensor;
    const int64_t offset = args.items[1]->integer;
    const std::vector<int64_t> size = integers(*args.items[2], "size", *this), stride = integers(*args.items[3], "stride", *this);
    if (size.size() != stride.size()) fail("a tensor's size and stride differ in length");
    int64_t last = offset, count = 1;
    for (size_t i = 0; i < size.size(); ++i) {
      if (size[i] > (int64_t{1} << 40)) fail("a tensor dimension of " + std::to_string(size[i]));
      if (size[i] == 0) count = 0;
      if (size[i] > 0 && stride[i] > (std::numeric_limits<int64_t>::max() - last) / size[i]) fail("a tensor's extent overflows");
      last += size[i] > 0 ? (size[i] - 1) * stride[i] : 0;
    }
    if (offset < 0 || (count > 0 && last >= storage.numel()))
      fail("a tensor reaches element " + std::to_string(last) + " of a storage of " + std::to_string(storage.numel()));
    PickleRef v = make(Kind::kTensor);
    v->tensor = count == 0 ? torch::empty(size, storage.options()) : storage.as_strided(size, stride, offset).clone();
    return v;
  }

  PickleRef call(const PickleValue& callable, const PickleValue& args) {
    if (callable.kind == Kind::kGlobal) {
      if (callable.text == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(args);
      if (callable.text == "torch._utils._rebuild_parameter") {
        if (args.kind != Kind::kTuple || args.items.empty() || args.items[0]->kind != Kind::kTensor)
          fail("_rebuild_parameter without a tensor");
        return args.items[0];
      }
      if (callable.text == "collections.OrderedDict") {
        if (args.kind != Kind::kTuple || !args.items.empty()) fail("OrderedDict called with arguments");
        return make(Kind::kDict);
      }
    }
    PickleRef v = make(Kind::kOpaque);
    v->text = callable.kind == Kind::kGlobal || callable.kind == Kind::kOpaque ? callable.text : PickleValue::kind_name(callable.kind);
    return v;
  }

  const Archive& archive_;
  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  std::string prefix_;
  std::vector<PickleRef> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleRef> memo_;
  std::map<std::string, PickleRef> storages_;
};

}  // namespace

PickleValue::~PickleValue() {
  std::vector<PickleRef> pending;
  auto take_children = [&pending](PickleValue& v) {
    for (PickleRef& item : v.items) pending.push_back(std::move(item));
    for (auto& [key, value] : v.entries) pending.push_back(std::move(key)), pending.push_back(std::move(value));
    v.items.clear();
    v.entries.clear();
  };
  take_children(*this);
  while (!pending.empty()) {
    PickleRef v = std::move(pending.back());
    pending.pop_back();
    if (v && v.use_count() == 1) take_children(*v);  // the last owner: its children go first, so its own end recurses no further
  }
}

const PickleValue* PickleValue::get(const std::string& key) const {
  if (kind != Kind::kDict) return nullptr;
  for (const auto& [k, v] : entries)
    if (k->kind == Kind::kString && k->text == key) return v.get();
  return nullptr;
}

const char* PickleValue::kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNone: return "None";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return "list";
    case Kind::kTuple: return "tuple";
    case Kind::kDict: return "dict";
    case Kind::kTensor: return "tensor";
    case Kind::kGlobal: return "global";
    case Kind::kOpaque: return "object";
  }
  return "?";
}

PickleRef read_torch_file(const std::string& path) {
  const auto file = MappedFile::open(path);
  const Archive archive(*file);
  // One top-level folder: <name>/data.pkl.
  std::string prefix;
  const Entry* pickle = nullptr;
  for (const auto& [name, entry] : archive.entries()) {
    const size_t slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash + 1) == "data.pkl") prefix = name.substr(0, slash + 1), pickle = &entry;
  }
  if (!pickle) archive.fail("no <name>/data.pkl entry");
  if (const Entry* order = archive.find(prefix + "byteorder"))
    if (std::string(reinterpret_cast<const char*>(order->data), order->size) != "little") archive.fail("big-endian storages are not read");
  PickleRef root = Unpickler(archive, *pickle, prefix).run();
  // The storages were copied out: nothing refers to the mapping any more.
  return root;
}

}  // namespace kvbench::models
