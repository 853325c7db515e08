/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// jemalloc's options for the programs that link it (CMakeLists.txt), read when the allocator
// starts: transparent huge pages for the heap and jemalloc's own metadata. A job's graphs,
// traces and replay state are hundreds of megabytes written once and read in passes; with 4 KiB
// pages most of that time was TLB misses (perf). Huge pages halve the user CPU time of a long
// decode (`run --model=llama2-70b --hardware=h100-sxm-80gb --mode=inference --tp=8 --batch=8
// --prompt=1024 --gen=4096`: 4.3 -> 2.2 s) and of `study serving`, for 3% more resident memory.
// The system time of a run varies from 0.1 to 2 s with what the kernel must do to find huge
// pages (compaction after other programs fragmented memory); the page faults do not (2,400 for
// that run). Keeping freed pages instead of returning them (decay off) changed neither.
// Where the kernel's transparent huge pages are off ("never") jemalloc falls back to normal
// pages; the output is the same either way. MALLOC_CONF in the environment still overrides it.
// (jemalloc documentation, "TUNING" and the opt.thp / opt.metadata_thp options.)

extern "C"
{
    /** jemalloc's compiled-in options (its documented malloc_conf symbol). */
    const char* malloc_conf = "thp:always,metadata_thp:always";
}
