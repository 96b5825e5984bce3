// Contract cases (launch): each quotes the promise it tries to break and runs on every device.
#include "fixture.hpp"

using namespace gpurt;
