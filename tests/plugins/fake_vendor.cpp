// A stand-in vendor library that the vendor-missing fake plugin links but cannot find at run time.
extern "C" __attribute__((visibility("default"))) int gpurt_fake_vendor_function() { return 42; }
