// Stand-in for LonestarGPU's lonestargpu.h (not stored with the KLAP repository copy used here).
#ifndef LSG_LONESTARGPU
#define LSG_LONESTARGPU
#include "common.h"
#include "graph.h"
#include "kernelconfig.h"
#include "component.h"
#include "list.h"
#endif
