/* Kyoyu: a global-address-space runtime for clusters of multi-GPU nodes. The one public header. */
#ifndef KYOYU_H
#define KYOYU_H

#include "kyoyu/export.h"
#include "kyoyu/status.h"
#include "kyoyu/runtime.h"
#include "kyoyu/comm.h"
#include "kyoyu/coll.h"
#include "kyoyu/dsm.h"
#include "kyoyu/array.h"
#include "kyoyu/sparse.h"
#include "kyoyu/io.h"

#define KY_VERSION_MAJOR 0
#define KY_VERSION_MINOR 1
#define KY_VERSION_PATCH 0

#endif
