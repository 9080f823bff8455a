// The translation unit that compiles kvbench's precompiled header (CMakeLists.txt, kvb_pch);
// every target that includes libtorch reuses it.
