// Reference counts as an OpenCL driver settles them. PoCL drops the references that finished
// commands and released events hold (on queues and memory objects) on a thread of its own, after
// the clFinish or clRelease* that let them go has returned: a count read at once was one high, once
// in a batched run with other tests beside it, and right when read again.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <thread>

namespace gpurt::test {

// read() once it equals `want`, or its last value after 2 s (then the caller's check fails with it).
template <class Read>
cl_uint settled_count(Read read, cl_uint want) {
  cl_uint r = read();
  for (int i = 0; i < 200 && r != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    r = read();
  }
  return r;
}

}  // namespace gpurt::test
