/* inject_write.c: writes a trace with libkreach_inject's own record writer (runtime/inject/
 * kr_inject_fmt.c, compiled in as test_inject does), no GPU and no CUPTI involved, so that
 * tests/lua/inject_trace_spec.lua can read that very file with kreach.profile.trace and check
 * every value: the writer and the reader are tested against each other, not each against a
 * hand-written fixture.
 *   inject_write full|alternate|partial <path>
 * The records are fixed; the spec states each of them. Change one here, change the spec too.
 *   full: the header (pid 4242, CUPTI 130001, start B = 1733000000000000000, every kind); four
 *     kernels, out of start order as CUPTI delivers them: krt::scale<float> (1 ns long, the
 *     largest shared memory and correlation), add_one and relu_kernel (an extern "C" name) with
 *     the same start, and one CUPTI could not time (start = end = 0); memcpys DtoH (2^53 + 1
 *     bytes), HtoD and one of a kind CUPTI has no name for; a memset; four NVTX ranges (two
 *     "step", one in the NCCL domain, one whose name holds quotes, JSON keys, a backslash, a
 *     newline, UTF-8 and a byte that is not); the footer, its counts those of the records, 3
 *     dropped, 2 buffers.
 *   alternate: KREACH_TRACE_ALTERNATE=step: four "step" ranges, kernels in the 1st and 3rd, and
 *     the footer's alternation counts.
 *   partial: a header and a kernel, no footer (the program was killed). */
#include "kr_inject_fmt.h"

#include <stdio.h>
#include <string.h>

#define B 1733000000000000000ull

static kr_jbuf out;
static kr_inject_totals n;

static void kernel(const char *mangled, uint64_t start, uint64_t end, uint32_t device,
                   uint32_t context, uint32_t stream, uint32_t correlation, int32_t gx, int32_t gy,
                   int32_t gz, int32_t bx, uint32_t registers, int32_t static_shared,
                   int32_t dynamic_shared) {
    kr_inject_kernel k = {.start = start, .end = end, .device = device, .context = context,
                          .stream = stream, .correlation = correlation, .grid = {gx, gy, gz},
                          .block = {bx, 1, 1}, .registers = registers,
                          .static_shared = static_shared, .dynamic_shared = dynamic_shared};
    kr_jbuf names = {0};
    kr_inject_names_json(&names, mangled); /* the library caches this text per function */
    kr_inject_line_kernel(&out, &k, names.p, names.len);
    kr_jbuf_free(&names);
    n.kernels++;
}

static void full(void) {
    kr_inject_line_header(&out, 4242, 130001, B, KR_TRACE_ALL, NULL);
    kernel("_ZN3krt5scaleIfEEvPT_S1_i", B + 3000, B + 3001, 0, 1, 14, 4294967295u, 65535, 2, 3,
           1024, 255, 49152, 16384);
    kernel("_Z7add_onePii", B + 1000, B + 2001, 1, 2, 7, 1, 2147483647, 1, 1, 32, 16, 0, 0);
    kernel("relu_kernel", B + 1000, B + 1500, 0, 1, 7, 2, 8, 1, 1, 256, 24, 0, 128);
    kernel("_Z7add_onePii", 0, 0, 0, 1, 7, 9, 1, 1, 1, 32, 16, 0, 0);
    kr_inject_line_memcpy(&out, B + 5000, B + 7000, 9007199254740993ull, 2, 0, 7, 3);
    kr_inject_line_memcpy(&out, B + 500, B + 900, 16384, 1, 0, 7, 4);
    kr_inject_line_memcpy(&out, B + 8000, B + 8100, 64, 99, 1, 13, 5);
    n.memcpys = 3;
    kr_inject_line_memset(&out, B + 4000, B + 4100, 16384, 0, 7);
    n.memsets = 1;
    kr_inject_line_range(&out, "step", NULL, B + 900, B + 3500);
    kr_inject_line_range(&out, "AllReduce", "NCCL", B + 4000, B + 4500);
    kr_inject_line_range(&out, "step", NULL, B + 3600, B + 8000);
    kr_inject_line_range(&out, "say \"start\":1,\"end\":2}\\ caf\xc3\xa9\n\xff!", NULL, B + 100,
                         B + 200);
    n.ranges = 4;
    n.dropped = 3;
    n.buffers = 2;
    n.end_ns = B + 9000;
    kr_inject_line_footer(&out, &n);
}

static void alternate(void) {
    kr_inject_line_header(&out, 77, 130001, 1000, KR_TRACE_KERNEL | KR_TRACE_MARKER, "step");
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t at = 10000 + 2000 * i;
        kr_inject_line_range(&out, "step", NULL, at, at + 1100);
        if (i % 2 == 0)
            kernel("relu_kernel", at + 500, at + 600, 0, 1, 7, (uint32_t)i, 1, 1, 1, 32, 8, 0, 0);
    }
    n.ranges = 4;
    n.buffers = 1;
    n.end_ns = 20000;
    n.alternate = 1;
    n.alternate_ranges = 4;
    n.switches_on = 1;
    n.switches_off = 2;
    n.switch_on_ns = 250;
    n.switch_off_ns = 375;
    kr_inject_line_footer(&out, &n);
}

static void partial(void) {
    kr_inject_line_header(&out, 5, 130001, 1000, KR_TRACE_ALL, NULL);
    kernel("_Z7add_onePii", 2000, 2500, 0, 1, 7, 1, 1, 1, 1, 32, 16, 0, 0);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: inject_write full|alternate|partial <path>\n");
        return 2;
    }
    if (!strcmp(argv[1], "full"))
        full();
    else if (!strcmp(argv[1], "alternate"))
        alternate();
    else if (!strcmp(argv[1], "partial"))
        partial();
    else {
        fprintf(stderr, "inject_write: unknown scenario '%s'\n", argv[1]);
        return 2;
    }
    const char *text = kr_jbuf_text(&out);
    FILE *f = fopen(argv[2], "wb");
    if (!f || out.failed || fwrite(text, 1, out.len, f) != out.len || fclose(f) != 0) {
        perror(argv[2]);
        return 1;
    }
    kr_jbuf_free(&out);
    return 0;
}
