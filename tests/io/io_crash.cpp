/* The crash-safety case of the io layer (tests/io/CMakeLists.txt runs the three steps in order):
 *   io_crash old FILE    writes FILE: dataset "v" of 1000 doubles, all 1.0
 *   io_crash kill FILE   starts a new FILE, writes "v" = 2.0 (every rank's data in the temporary file), then
 *                        rank 0 is killed (SIGKILL) before ky_io_close: the job dies midway
 *   io_crash check FILE  FILE is still the old one (values 1.0, checksum verified); the temporary file the
 *                        killed job left is refused by ky_io_open (not HDF5 yet, or not marked complete)
 * Prints "IO CRASH OK" when the check passes. */
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kyoyu.h"

static int fail(const char *what, int st)
{
    fprintf(stderr, "rank %d: io_crash: %s -> %d (%s): %s\n", ky_rank(), what, st, ky_strerror(st),
            ky_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (ky_init(&argc, &argv) != KY_OK || argc < 3) return 2;
    std::string mode = argv[1], path = argv[2];
    size_t dims[1] = {1000};
    ky_array_t a;
    int st = ky_array_create(1, dims, sizeof(double), NULL, KY_PLACE_HOST, NULL, &a);
    if (st) return fail("ky_array_create", st);
    size_t lo[1], hi[1];
    double *p = (double *)ky_array_local(a, lo, hi);
    ky_io_file_t f;
    ky_io_opts_t o{KY_IO_F64, 0, NULL};
    int rc = 0;
    if (mode == "old" || mode == "kill") {
        for (size_t i = 0; i < hi[0] - lo[0]; i++) p[i] = mode == "old" ? 1.0 : 2.0;
        if ((st = ky_io_create(path.c_str(), &f))) return fail("ky_io_create", st);
        if ((st = ky_io_write(f, "v", a, &o))) return fail("ky_io_write", st);
        if (mode == "kill") {
            ky_comm_barrier(); /* every rank's data is written */
            if (ky_rank() == 0) {
                printf("io_crash: killing rank 0 before ky_io_close\n");
                fflush(stdout);
                raise(SIGKILL);
            }
        }
        if ((st = ky_io_close(f))) return fail("ky_io_close", st);
    } else {
        for (size_t i = 0; i < hi[0] - lo[0]; i++) p[i] = 0.0;
        if ((st = ky_io_open(path.c_str(), &f))) return fail("ky_io_open of the old file", st);
        if ((st = ky_io_read(f, "v", a, NULL))) return fail("ky_io_read of the old file", st);
        ky_io_close(f);
        long bad = 0;
        for (size_t i = 0; i < hi[0] - lo[0]; i++) bad += p[i] != 1.0;
        if (bad) rc = fail("the old file's values changed", (int)bad);
        /* the killed job's temporary file: there, and refused */
        std::string dir = path.substr(0, path.rfind('/')),
                    base = path.substr(path.rfind('/') + 1) + ".kytmp-";
        std::string tmp;
        if (DIR *d = opendir(dir.c_str())) {
            while (dirent *e = readdir(d))
                if (strncmp(e->d_name, base.c_str(), base.size()) == 0) tmp = dir + "/" + e->d_name;
            closedir(d);
        }
        if (tmp.empty()) {
            rc = fail("no temporary file left by the killed job (it should be there, refused)", 0);
        } else {
            st = ky_io_open(tmp.c_str(), &f);
            /* refused either way: HDF5 had not written its superblock yet ("not an HDF5 file"), or it had
             * and the file is not marked complete ("did not finish") */
            if (st != KY_ERR_IO ||
                (!strstr(ky_last_error(), "did not finish") && !strstr(ky_last_error(), "not an HDF5")))
                rc = fail("ky_io_open of the killed job's temporary file should be refused", st);
            ky_comm_barrier();
            if (ky_rank() == 0) unlink(tmp.c_str());
        }
        if (rc == 0 && ky_rank() == 0) printf("IO CRASH OK\n");
    }
    ky_array_free(a);
    ky_finalize();
    return rc;
}
