/* Page faults: the SIGSEGV handler that turns a load or store on a page not held (or held read-only) into
 * a fetch from the home, a twin, or a home snapshot.
 *
 * The handler runs in the faulting thread and calls MPI: the fault is synchronous, on a plain load or
 * store of the application, so the thread holds none of our locks or MPI's (docs/api.md says what happens
 * when MPI or a GPU copy itself reads global memory that is not resident, and to preload first). A fault
 * outside the global space goes to the application's own handler if it had one, else the program dies with
 * SIGSEGV as it would without Kyoyu, after a message. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "dsm/dsm.h"
#include "runtime/config.h"
#include "runtime/trace.h"

static struct sigaction prev_action;
static int installed;

/* 1 write, 0 read, -1 unknown (then a store on a page mapped read-only faults a second time). */
static int fault_is_write(void *ctx)
{
#if defined(__x86_64__)
    return (((ucontext_t *)ctx)->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
    (void)ctx;
    return -1;
#endif
}

static void die_with_default(int sig, const char *msg)
{
    /* write(2) only: the process may be in any state. */
    ssize_t w = write(2, msg, strlen(msg));
    (void)w;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL); /* returning re-runs the instruction, which now kills the process */
}

/* Not ours. Kyoyu's message first (MPI installs its own SIGSEGV handler at init, so "the previous
 * handler" is often MPI's and would not say where the fault was), then whoever handled SIGSEGV before. */
static void chain(int sig, siginfo_t *si, void *ctx)
{
    char msg[200];
    int has_prev = ((prev_action.sa_flags & SA_SIGINFO) && prev_action.sa_sigaction) ||
                   (!(prev_action.sa_flags & SA_SIGINFO) && prev_action.sa_handler != SIG_DFL &&
                    prev_action.sa_handler != SIG_IGN);
    snprintf(msg, sizeof msg,
             "rank %d: segmentation fault at address %p (outside the Kyoyu global address space)%s\n",
             kyi_rt.rank, si->si_addr, has_prev ? "; passing it to the previously installed handler" : "");
    if (!has_prev) {
        die_with_default(sig, msg);
        return;
    }
    ssize_t w = write(2, msg, strlen(msg));
    (void)w;
    if (prev_action.sa_flags & SA_SIGINFO)
        prev_action.sa_sigaction(sig, si, ctx);
    else
        prev_action.sa_handler(sig);
}

/* A home page's first write in an interval: keep the synchronised version in a snapshot if the page is
 * guarded (fetched recently), else just open it (HOME_FREE). A guarded page still as allocated needs no
 * copy: its synchronised version is zeros (HOME_FRESH). A new allocation is guarded in its first intervals,
 * and the program's first writes to it (its initialisation) used to copy every page of it. Returns 1 if a
 * snapshot was made. Stripe lock held; the protection change is the caller's. */
static int open_home_page(size_t pg, uint64_t epoch)
{
    kyi_wait_unsent(pg); /* a reply may still be reading the data or the old snapshot */
    int guard = kyi_pg_guarded(pg, epoch),
        fresh = guard && __atomic_load_n(&kyi_dsm.zero[pg], __ATOMIC_RELAXED);
    __atomic_store_n(&kyi_dsm.zero[pg], 0, __ATOMIC_RELAXED); /* HOME_FRESH says it from now on */
    if (guard && !fresh) kyi_page_copy(kyi_pg_snap(pg), kyi_pg_data(pg), kyi_dsm.page);
    kyi_dsm.state[pg] = fresh ? KYI_PG_HOME_FRESH : guard ? KYI_PG_HOME_RW : KYI_PG_HOME_FREE;
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_push(guard ? &kyi_dsm.written : &kyi_dsm.freed, pg);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    if (guard && !fresh) KYI_DSM_COUNT(home_snapshots, 1);
    return guard && !fresh;
}

int kyi_open_for_write(size_t pg)
{
    if (kyi_dsm.state[pg] == KYI_PG_HOME_RO) {
        open_home_page(pg, kyi_home_epoch());
        return kyi_protect(pg, 1, PROT_READ | PROT_WRITE);
    }
    /* Listed as dirty before it becomes writable: a sibling thread that stores to the page once it is
     * writable and then releases a lock must find it in the dirty list (its flush then waits here, on the
     * stripe lock, and sends the store). Made writable first, the page was missing from that list, the
     * sibling's release sent nothing, and the store went home only with this thread's next flush: after the
     * next holder of the lock had read the old value (one lost update in about twenty 4-rank stress runs). */
    kyi_page_copy(kyi_pg_twin(pg), kyi_pg_data(pg), kyi_dsm.page);
    kyi_dsm.state[pg] = KYI_PG_RW;
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    kyi_vec_push(&kyi_dsm.dirty, pg);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    KYI_DSM_COUNT(twins, 1);
    return kyi_protect(pg, 1, PROT_READ | PROT_WRITE);
}

/* A home that writes a page usually writes the next ones too (a sweep over its block): open up to
 * KY_DSM_SNAPSHOT_RUN - 1 following write-protected home pages that need a snapshot now, with one
 * protection change, instead of a fault each (pages that need none cost no copy: up to 8 times as many).
 * The copies are the same; what goes is the faults and protection calls. pg's stripe is held; the others
 * are only tried (a busy one ends the run), so holding two can never deadlock. */
static size_t open_home_run(size_t pg)
{
    static long run_cached = KYI_CONFIG_UNREAD;
    long run = kyi_setting_long_once(KYI_SET_DSM_SNAPSHOT_RUN, &run_cached);
    uint64_t epoch = kyi_home_epoch();
    size_t m = 0, end = pg + 1;
    long copies = 0;
    /* Only pages of pg's own allocation: the next allocation may be made or freed by a sibling right now
     * (its pages' states are set without this stripe lock). */
    pthread_rwlock_rdlock(&kyi_dsm.table_lock);
    const kyi_alloc_t *a = kyi_alloc_find(pg << kyi_dsm.page_shift);
    if (a) end = (a->off + a->bytes) >> kyi_dsm.page_shift;
    pthread_rwlock_unlock(&kyi_dsm.table_lock);
    for (size_t q = pg + 1; q < end && copies + 1 < run && (long)(q - pg) < 8 * run &&
                            q % KYI_DSM_STRIPES != pg % KYI_DSM_STRIPES;
         q++) {
        if (pthread_mutex_trylock(kyi_pg_lock(q))) break;
        int ok = kyi_dsm.state[q] == KYI_PG_HOME_RO;
        if (ok) copies += open_home_page(q, epoch);
        pthread_mutex_unlock(kyi_pg_lock(q));
        if (!ok) break;
        m++;
    }
    /* a store in between finds HOME_RW or HOME_FREE, returns, and retries until this lands */
    if (m) kyi_protect(pg + 1, m, PROT_READ | PROT_WRITE);
    /* Pages written first since their allocation took no copy, but a new allocation stays guarded for its
     * next intervals, in which a write copies them: their snapshot memory is made now (populate_snaps). */
    return kyi_dsm.state[pg] == KYI_PG_HOME_FRESH && kyi_pg_guarded(pg, epoch + 1) ? m + 1 : 0;
}

/* Make the snapshot slots of pages [pg, pg+n) resident in one call. Copying into a slot never touched costs
 * the kernel's page allocation, a fault per 4 KiB: 64 MiB took 66-74 ms faulting against 49-59 ms populated
 * in runs and 7 ms copying into resident memory (2-core VM). Best effort: without MADV_POPULATE_WRITE
 * (Linux < 5.14) the copies fault them in. */
static void populate_snaps(size_t pg, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    if (n) madvise(kyi_pg_snap(pg), n << kyi_dsm.page_shift, MADV_POPULATE_WRITE);
#else
    (void)pg, (void)n;
#endif
}

int kyi_install_checked(size_t pg, int write, const uint64_t *acq)
{
    /* A fetch that overlapped a sibling thread's lock acquire may hold data older than the lock's previous
     * release. The acquire counts itself and takes the held list in one step under lists_lock; checking the
     * count and joining the list in one step here means either the acquire sees this page (and drops it)
     * or this check sees the acquire (KY_PENDING: fetch again). The page stays inaccessible until then. */
    pthread_mutex_lock(&kyi_dsm.lists_lock);
    if (acq && atomic_load(&kyi_dsm.acquires) != *acq) {
        pthread_mutex_unlock(&kyi_dsm.lists_lock);
        return KY_PENDING;
    }
    kyi_vec_push(&kyi_dsm.held, pg);
    pthread_mutex_unlock(&kyi_dsm.lists_lock);
    /* A write goes straight to read-write in kyi_open_for_write: one protection change, not two. A thread
     * touching the page in between faults, waits for the stripe lock held here, and finds it RW. */
    if (!write) KYI_CHECK(kyi_protect(pg, 1, PROT_READ));
    kyi_dsm.state[pg] = KYI_PG_RO;
    return write ? kyi_open_for_write(pg) : KY_OK;
}

int kyi_install(size_t pg, int write)
{
    return kyi_install_checked(pg, write, NULL);
}

int kyi_touch_page(const char *call, size_t pg, int write)
{
    pthread_mutex_t *lk = kyi_pg_lock(pg);
    pthread_mutex_lock(lk);
    for (;;) {
        int s = kyi_dsm.state[pg];
        if (s == KYI_PG_FETCHING) {
            pthread_cond_wait(&kyi_dsm.fetched[pg % KYI_DSM_STRIPES], lk);
            continue;
        }
        int st = KY_OK;
        if (kyi_dsm.node && (s >= KYI_PG_NODE || s == KYI_PG_NONE)) {
            pthread_rwlock_rdlock(&kyi_dsm.table_lock);
            int home = kyi_page_home(pg, NULL);
            pthread_rwlock_unlock(&kyi_dsm.table_lock);
            if (home != KYI_HOME_STORE) {
                st = kyi_node_touch(call, pg, write == 1, home);
                pthread_mutex_unlock(lk);
                return st;
            }
        }
        if ((s == KYI_PG_HOME_RO || s == KYI_PG_RO) && write) {
            /* a home's first write since the last synchronisation keeps the synchronised version; a cached
             * page's first write keeps a twin for the diff */
            st = kyi_open_for_write(pg);
            size_t pop = s == KYI_PG_HOME_RO && st == KY_OK ? open_home_run(pg) : 0;
            if (pop) {
                pthread_mutex_unlock(lk); /* the page is open: nothing below needs the lock */
                populate_snaps(pg, pop);
                return st;
            }
        } else if (s == KYI_PG_NONE) {
            pthread_rwlock_rdlock(&kyi_dsm.table_lock);
            int home = kyi_page_home(pg, NULL);
            pthread_rwlock_unlock(&kyi_dsm.table_lock);
            if (home == -1 || home == kyi_rt.rank) {
                pthread_mutex_unlock(lk);
                return kyi_fail(KY_ERR_RANGE, call,
                                "address %p is in the global space but not in a live allocation",
                                (void *)kyi_pg_app(pg));
            }
            kyi_dsm.state[pg] = KYI_PG_FETCHING;
            pthread_mutex_unlock(lk);
            /* A lock acquired by a sibling thread meanwhile may have been released by its previous holder
             * after the home answered: fetch again, so the new holder never reads the older version. The
             * second time with acquires held off (they invalidate under release_lock), so a rank whose
             * threads take locks all the time cannot starve a fault. */
            uint64_t acq = atomic_load(&kyi_dsm.acquires);
            st = kyi_fetch_run(call, home, pg, 1);
            pthread_mutex_lock(lk);
            if (st == KY_OK) st = kyi_install_checked(pg, write == 1, &acq);
            if (st == KY_PENDING) {
                pthread_mutex_unlock(lk);
                pthread_mutex_lock(&kyi_dsm.release_lock); /* no acquire can run meanwhile */
                st = kyi_fetch_run(call, home, pg, 1);
                pthread_mutex_lock(lk);
                if (st == KY_OK) st = kyi_install(pg, write == 1);
                pthread_mutex_unlock(&kyi_dsm.release_lock);
            }
            if (st != KY_OK) kyi_dsm.state[pg] = KYI_PG_NONE;
            pthread_cond_broadcast(&kyi_dsm.fetched[pg % KYI_DSM_STRIPES]);
        } else {
            /* Another thread made the page present meanwhile, or a protection change raced with another one
             * and the mapping lags the state: a new local allocation's pages set read-only by
             * open_home_pages after a sibling's open_home_run had opened them (a store then faulted forever).
             * Make the mapping match the state (same result when it already does). */
            int writable = s == KYI_PG_RW || s == KYI_PG_HOME_RW || s == KYI_PG_HOME_FREE ||
                           s == KYI_PG_HOME_OPEN || s == KYI_PG_HOME_FRESH;
            if (write && writable)
                st = kyi_protect(pg, 1, PROT_READ | PROT_WRITE);
            else if (!write && (writable || s == KYI_PG_RO || s == KYI_PG_HOME_RO))
                st = kyi_protect(pg, 1, writable ? PROT_READ | PROT_WRITE : PROT_READ);
        }
        pthread_mutex_unlock(lk);
        return st;
    }
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    void *addr = si->si_addr;
    if (!kyi_in_gas(addr)) {
        chain(sig, si, ctx);
        return;
    }
    uint64_t t0 = kyi_now_ns(), tt = KYI_TRACE_T0();
    size_t pg = kyi_pg(addr);
    int write = fault_is_write(ctx);
    int s = kyi_dsm.state[pg];
    if (write == -1)
        write = (s == KYI_PG_RO || s == KYI_PG_HOME_RO || (s == KYI_PG_NODE && !kyi_dsm.parallel)) ? 1 : 0;
    if (write)
        KYI_DSM_COUNT(write_faults, 1);
    else
        KYI_DSM_COUNT(read_faults, 1);
    int st = kyi_touch_page("page fault", pg, write);
    KYI_DSM_COUNT(coherence_ns, kyi_now_ns() - t0);
    KYI_TRACE_SPAN("dsm", write ? "page fault (write)" : "page fault (read)", tt, (int64_t)pg, -1);
    if (st < 0) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "rank %d: segmentation fault at address %p inside the Kyoyu global address space: %s\n",
                 kyi_rt.rank, addr, ky_last_error());
        die_with_default(sig, msg);
    }
}

int kyi_fault_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags =
        SA_SIGINFO | SA_RESTART | SA_NODEFER; /* NODEFER: a fault on another page while serving one */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &prev_action))
        return kyi_fail(KY_ERR_SYSTEM, "ky_init",
                        "installing the SIGSEGV handler of the global space failed");
    installed = 1;
    return KY_OK;
}

void kyi_fault_uninstall(void)
{
    if (installed) sigaction(SIGSEGV, &prev_action, NULL);
    installed = 0;
}
