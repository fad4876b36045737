/*===- c-header.c - runtime.h is valid C ---------------------------------===*/

#include "cachet/runtime.h"

/* Called by runtime-test.cpp; returns 0. */
int cachetCHeaderCheck(void);

int cachetCHeaderCheck(void) {
  CachetBinding binding = {0, 0, 0};
  CachetDeviceInfo info;
  CachetCooperativeMatrixInfo coop;
  (void)info;
  (void)coop;
  return binding.buffer == 0 &&
                 cachetStatusString(CACHET_ERROR_NO_DEVICE)[0] == 'C'
             ? 0
             : 1;
}
