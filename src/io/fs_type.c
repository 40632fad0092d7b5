/* ky_io_fs_type: the name of a path's file system, the first column of KY_IO_PATH=auto's table (table.c).
 * Built with or without HDF5: kybench io-tune and the io benchmark label their rows with it too, so the names
 * exist once. */
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>

#include "kyoyu/io.h"

static const struct {
    unsigned long magic;
    const char *name;
} fs_names[] = {
    {0xEF53, "ext4"},       {0x58465342, "xfs"},    {0x01021994, "tmpfs"}, {0x794c7630, "overlay"},
    {0x6969, "nfs"},        {0x0BD00BD0, "lustre"}, {0x9123683E, "btrfs"}, {0x47504653, "gpfs"},
    {0x19830326, "beegfs"}, {0x2FC12FC1, "zfs"},    {0x65735546, "fuse"},  {0x858458f6, "ramfs"},
    {0xFE534D42, "smb2"},   {0x5346414F, "afs"},    {0x7461636f, "ocfs2"}, {0x73717368, "squashfs"},
};

const char *ky_io_fs_type(const char *path, char *buf, size_t len)
{
    struct statfs s;
    if (statfs(path, &s) != 0) {
        /* not there yet: its directory decides */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = 0;
        else
            snprintf(dir, sizeof dir, "%s", slash ? "/" : ".");
        if (statfs(dir, &s) != 0) {
            snprintf(buf, len, "unknown");
            return buf;
        }
    }
    unsigned long m = (unsigned long)s.f_type & 0xffffffffUL;
    for (size_t i = 0; i < sizeof fs_names / sizeof fs_names[0]; i++)
        if (fs_names[i].magic == m) {
            snprintf(buf, len, "%s", fs_names[i].name);
            return buf;
        }
    snprintf(buf, len, "0x%lx", m);
    return buf;
}
