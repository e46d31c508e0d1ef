/* inject_expect.h: what tests/inject/inject_target.cu does, for inject_check.c to compare the
 * trace against. Shared so that the two cannot drift apart. */
#ifndef INJECT_EXPECT_H
#define INJECT_EXPECT_H

#define INJ_STEPS 5          /* NVTX push/pop ranges named "step" */
#define INJ_ADD_PER_STEP 3   /* add_one launches per step */
#define INJ_SCALE_PER_STEP 2 /* krt::scale<float> launches per step */
#define INJ_N 4096           /* elements; the memcpys and the memset move INJ_N * 4 bytes */

#define INJ_ADD_NAME "add_one(int*, int)"
#define INJ_ADD_MANGLED "_Z7add_onePii"
#define INJ_SCALE_NAME "void krt::scale<float>(float*, float, int)"
#define INJ_SCALE_MANGLED "_ZN3krt5scaleIfEEvPT_S1_i"
#define INJ_OUTER "phase"    /* one start/end range around everything, started before CUDA */

#endif
