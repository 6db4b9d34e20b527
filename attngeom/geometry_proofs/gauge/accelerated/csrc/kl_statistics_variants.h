/* kl_statistics_body.h for one floating type (REAL, INDEX, LANES, SQRT, LOG and NAME defined
 * by the includer, undefined at the end): the baseline code (suffix NAME) and, on x86-64
 * with GCC or Clang, the AVX2 + FMA code (suffix NAME_avx2), chosen at run time. */

#define SUFFIX NAME
#define TARGET
#include "kl_statistics_body.h"
#undef SUFFIX
#undef TARGET
#if DISPATCH
#define SUFFIX CAT(NAME, _avx2)
#define TARGET __attribute__((target("avx2,fma")))
#include "kl_statistics_body.h"
#undef SUFFIX
#undef TARGET
#endif
#undef REAL
#undef INDEX
#undef LANES
#undef SQRT
#undef LOG
#undef NAME
