/*
 * nki_prog.h - a kernel traced by the NKI front end (python/, docs/NKI.md), as a kernel of the
 * suite's kind.
 *
 * The front end runs an NKI kernel file in Python and writes what the kernel did as a program
 * file (".gsk", the format below): HBM tensors, SBUF/PSUM pools and tiles, and one line per
 * builder call with the kernel's own file:line. Loading such a file gives a gs_kernel_def whose
 * build() replays those calls through the builder API of gs/kernel.h, so an NKI kernel takes the
 * same job path as a C kernel (jobrun.h: build, run on the model, roofline, check, record).
 *
 * The .gsk format (version 1), one statement a line, tokens separated by one space; a token
 * that may hold any text (paths, names, messages) is percent-encoded (bytes <= 0x20, '%' and
 * >= 0x7f as %XX):
 *   gsk 1                                   first line
 *   kernel NAME                             the kernel's name (records say nki.NAME)
 *   file IDX PATH                           source file IDX (dense from 0) for F below
 *   reduction L                             longest reduction behind an output (tolerance)
 *   refargs JSON                            how a reference is called: the kernel's arguments
 *                                           in order, inputs by index, literals (refrun.py)
 *   reference PATH FUNC                     written by older front ends; read and ignored
 *   tensor IDX in|out|scratch DTYPE NAME D0xD1..[ LO HI INT]   HBM tensor (IDX dense from 0)
 *   data IDX PATH                           input IDX's values: raw little-endian float64
 *   core C                                  the statements that follow build core C
 *   pool IDX sbuf|psum BUFS BYTES F L NAME  a pool of BUFS rotating buffers (per core)
 *   tile IDX POOL DTYPE PARTS FREE F L      the pool's next buffer as tile IDX
 *   OP F L OPERAND...                       a builder call (gs/kernel.h), e.g.
 *       dma_copy F L DST SRC QUEUE          matmul F L PSUM STAT MOV ACC
 *   fail F L unsupported|invalid|does-not-fit MESSAGE   the kernel stopped at F:L
 * Operands: H<tensor>,<offset>,<parts>,<part_stride>,<ndim>(,<size>,<stride>)xndim for HBM,
 * T<tile>,<p0>,<parts>,<offset>,<ndim>(,<size>,<stride>)xndim for a tile (offsets and strides in
 * elements), #<float> an immediate, - none, and engine / ALU / activation names.
 *
 * A program file runs no code: the numpy reference that checks the outputs is the one the caller
 * names (gs_nki_prog_set_reference: `nki run --reference`, `nki replay --reference`), never a
 * path found in the file (a program may come from anywhere; replay runs no Python otherwise).
 *
 * Errors: a malformed file is GS_ERR_INVALID naming the file and line (the front end wrote
 * something this reader does not know: a version mismatch or a bug). Errors of the kernel
 * itself surface when it is built, at the kernel's own file:line, like a C kernel's.
 */
#ifndef GS_NKI_PROG_H
#define GS_NKI_PROG_H

#include "gs/common.h"
#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_nki_prog gs_nki_prog;

/* Load a .gsk file. NULL with err on failure (file unreadable, malformed, out of memory). The
 * caller frees with gs_nki_prog_free. */
gs_nki_prog *gs_nki_prog_load(const char *path, gs_error *err);
void gs_nki_prog_free(gs_nki_prog *p); /* NULL ok; not while its kernel is registered */

/*
 * The program as a kernel: name "nki.NAME", one variant "nki", dims = the first tensor's shape
 * (no check shapes: gs_nki_prog_shape gives the --shape to run it with), every dtype; SPMD when the
 * program builds more than core 0. Its reference runs the numpy reference given to
 * gs_nki_prog_set_reference before this call (none: outputs are not checked). The returned
 * definition is owned by p. Only one program's kernel may be in use at a time in a process (the
 * kernel callbacks of gs_kernel_def carry no context): this call makes p that program.
 */
const gs_kernel_def *gs_nki_prog_kernel(gs_nki_prog *p);

/* The numpy reference that checks the outputs: FUNC of the Python file at path (run in a child
 * with the program's refargs). Call before gs_nki_prog_kernel. GS_OK, or GS_ERR_USAGE with err
 * when a name is too long. */
gs_status gs_nki_prog_set_reference(gs_nki_prog *p, const char *path, const char *func,
                                    gs_error *err);

/* Whether the file has a `reference` line (older front ends wrote one): it is never run, and a
 * caller may say so. */
int gs_nki_prog_names_reference(const gs_nki_prog *p);

/* Set the interpreter and front-end directory the reference runs with (gs_nki_python). */
void gs_nki_prog_set_python(gs_nki_prog *p, const char *python, const char *frontend_dir);

/* Limits of the reference's process: wall seconds (a timeout, and as many CPU seconds), bytes of
 * address space; 0: none. */
void gs_nki_prog_set_limits(gs_nki_prog *p, double wall_s, double mem_bytes);

/* Where the reference's files go: dir/ref (created, then removed with its files), so a caller
 * that removes dir on a signal removes them too (its names: manifest, stderr, inI.f64,
 * outI.f64 for I < GS_KERNEL_MAX_TENSORS). Unset: a new /tmp/gensweep-ref-XXXXXX. */
void gs_nki_prog_set_workdir(gs_nki_prog *p, const char *dir);

/* After the job ran: GS_OK, or the reference's failure (its message in err). The check of a
 * failed reference counts nothing; the caller reports the job as an error. */
gs_status gs_nki_prog_reference_status(const gs_nki_prog *p, gs_error *err);

/* The kernel's --shape and --dtype (the first tensor's), valid after gs_nki_prog_kernel. */
const char *gs_nki_prog_shape(const gs_nki_prog *p);
const char *gs_nki_prog_dtype(const gs_nki_prog *p);

/* Percent-encode / decode one token (the format's rule above). Decoding writes at most size
 * bytes including the NUL; returns 0 on success, -1 on a bad escape or overflow. */
int gs_nki_unescape(const char *in, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
