// The target is header-only (an inline function); SwiftPM wants one source file.
#include "CStrataPrefetch.h"
