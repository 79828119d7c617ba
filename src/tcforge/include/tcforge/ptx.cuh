// The whole header library: include this, or the topic headers one by one.
#pragma once
#include "tcforge/smem.cuh"
#include "tcforge/sync.cuh"
#include "tcforge/mbarrier.cuh"
#include "tcforge/cluster.cuh"
#include "tcforge/tma.cuh"
#include "tcforge/cp_async.cuh"
#include "tcforge/wgmma.cuh"
#include "tcforge/fp8.cuh"
