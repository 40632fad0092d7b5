/* The io calls in a build without HDF5 (cmake/KyoyuIO.cmake found neither a parallel nor a serial one): each
 * says so and returns KY_ERR_UNSUPPORTED, so programs link everywhere and the tests skip with the reason. */
#include "kyoyu.h"
#include "kyoyu/io.h"
#include "runtime/log.h"

static int none(const char *call)
{
    return kyi_fail(KY_ERR_UNSUPPORTED, call,
                    "this Kyoyu was built without HDF5 (install libhdf5-openmpi-dev or libhdf5-dev and "
                    "configure again: docs/io.md)");
}

size_t ky_io_type_size(ky_io_type_t t)
{
    static const size_t sz[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return (unsigned)t < sizeof sz / sizeof sz[0] ? sz[t] : 0;
}

int ky_io_create(const char *path, ky_io_file_t *out)
{
    (void)path;
    if (out) *out = NULL;
    return none("ky_io_create");
}
int ky_io_open(const char *path, ky_io_file_t *out)
{
    (void)path;
    if (out) *out = NULL;
    return none("ky_io_open");
}
int ky_io_close(ky_io_file_t f)
{
    return f ? none("ky_io_close") : KY_OK;
}
int ky_io_abort(ky_io_file_t f)
{
    return f ? none("ky_io_abort") : KY_OK;
}
int ky_io_write(ky_io_file_t f, const char *name, ky_array_t a, const ky_io_opts_t *o)
{
    (void)f, (void)name, (void)a, (void)o;
    return none("ky_io_write");
}
int ky_io_read(ky_io_file_t f, const char *name, ky_array_t a, const ky_io_opts_t *o)
{
    (void)f, (void)name, (void)a, (void)o;
    return none("ky_io_read");
}
int ky_io_write_buffer(ky_io_file_t f, const char *name, int ndim, const size_t dims[], const size_t lo[],
                       const size_t hi[], const void *buf, const ky_io_opts_t *o)
{
    (void)f, (void)name, (void)ndim, (void)dims, (void)lo, (void)hi, (void)buf, (void)o;
    return none("ky_io_write_buffer");
}
int ky_io_read_buffer(ky_io_file_t f, const char *name, int ndim, const size_t lo[], const size_t hi[],
                      void *buf, const ky_io_opts_t *o)
{
    (void)f, (void)name, (void)ndim, (void)lo, (void)hi, (void)buf, (void)o;
    return none("ky_io_read_buffer");
}
int ky_io_info(ky_io_file_t f, const char *name, int *ndim, size_t dims[], ky_io_type_t *type,
               int *components)
{
    (void)f, (void)name, (void)ndim, (void)dims, (void)type, (void)components;
    return none("ky_io_info");
}
