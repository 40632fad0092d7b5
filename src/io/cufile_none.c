/* The GPUDirect Storage path (KY_IO_PATH=cufile) as it stands: not built. The design it will fill
 * (docs/io.md): datasets are created contiguous and allocated at creation, so after H5Fflush the dataset's
 * bytes are one extent at H5Dget_offset(dset) of the file; each rank opens the file with O_DIRECT, registers
 * it with cuFileHandleRegister, and writes (reads) the runs of its hyperslab that are contiguous in the file
 * with cuFileWrite (cuFileRead) straight from (into) GPU memory, while HDF5 keeps the metadata. Until then
 * the path says why it is missing instead of falling back silently, so a measurement never mistakes
 * bounce for cufile. */
#include "io/io.h"
#include "runtime/log.h"

static int missing(const char *call, ky_io_file_t f)
{
    return kyi_fail(KY_ERR_UNSUPPORTED, call,
                    "KY_IO_PATH=cufile for %s: this Kyoyu has no GPUDirect Storage (cuFile) path yet; use "
                    "KY_IO_PATH=bounce or auto (docs/io.md)",
                    f->writing ? f->tmp : f->path);
}

int kyi_io_cufile_put(const char *call, ky_io_file_t f, hid_t dset, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks)
{
    (void)dset, (void)sh, (void)p, (void)cks;
    return missing(call, f);
}

int kyi_io_cufile_get(const char *call, ky_io_file_t f, hid_t dset, const kyi_io_shape_t *sh,
                      const kyi_io_piece_t *p, uint64_t *cks)
{
    (void)dset, (void)sh, (void)p, (void)cks;
    return missing(call, f);
}
