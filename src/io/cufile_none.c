/* The GPUDirect Storage path (KY_IO_PATH=cufile) in a build without it: CUDA off, or cufile.h and libcufile
 * not found at configure time (cmake/KyoyuIO.cmake; the path itself is cufile.c). The forced path says why it
 * is missing instead of falling back silently, so a measurement never mistakes bounce for cufile; auto never
 * picks it (kyi_io_cufile_available is 0). */
#include "io/io.h"
#include "runtime/log.h"

static int missing(const char *call, ky_io_file_t f)
{
    return kyi_fail(KY_ERR_UNSUPPORTED, call,
                    "KY_IO_PATH=cufile for %s: this Kyoyu was built without the GPUDirect Storage (cuFile) "
                    "path (needs CUDA, cufile.h and libcufile at configure time); use KY_IO_PATH=bounce or "
                    "auto (docs/io.md)",
                    f->writing ? f->tmp : f->path);
}

int kyi_io_cufile_put(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks)
{
    (void)off, (void)sh, (void)p, (void)cks;
    return missing(call, f);
}

int kyi_io_cufile_get(const char *call, ky_io_file_t f, uint64_t off, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks)
{
    (void)off, (void)sh, (void)p, (void)cks;
    return missing(call, f);
}

int kyi_io_cufile_available(void)
{
    return 0;
}

int kyi_io_cufile_close(const char *call, ky_io_file_t f, int sync)
{
    (void)call, (void)f, (void)sync;
    return KY_OK;
}

int kyi_io_cufile_open(const char *call, ky_io_file_t f)
{
    return missing(call, f);
}

int kyi_io_cufile_fs_refused(ky_io_file_t f)
{
    (void)f;
    return 0;
}

void kyi_io_cufile_refuse_fs(ky_io_file_t f)
{
    (void)f;
}
