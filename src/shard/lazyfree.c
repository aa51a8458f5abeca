/* lazyfree.c - see lazyfree.h. */
#include "shard/lazyfree.h"
#include "lib/mem.h"
#include "server/config.h"
#include "shard/db.h"
#include <pthread.h>

typedef struct job {
    struct job *next;
    void (*free_fn)(void *obj); /* NULL: obj is a table */
    void *obj;
} job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static job *head, *tail;
static long pending; /* atomic reads */
static long freed;   /* objects and tables freed here since CONFIG RESETSTAT */
static int enabled, started;
static _Thread_local int on_lazy_thread;

static void run(job *j) {
    if (j->free_fn) j->free_fn(j->obj);
    else {
        table *t = j->obj;
        table_destroy(&t, entry_free);
    }
    zfree(j);
}

static void *lazy_main(void *arg) {
    (void)arg;
    on_lazy_thread = 1;
    mem_thread_init(MEM_MAX_THREADS - 1);
    pthread_setname_np(pthread_self(), "lazyfree");
    for (;;) {
        pthread_mutex_lock(&lock);
        while (!head) pthread_cond_wait(&cond, &lock);
        job *j = head;
        head = j->next;
        if (!head) tail = NULL;
        pthread_mutex_unlock(&lock);
        run(j);
        __atomic_sub_fetch(&pending, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void start(void) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&th, &attr, lazy_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

void lazyfree_enable(void) { enabled = 1; }

static _Thread_local int cause = LF_SERVER_DEL;

int lazyfree_cause(int c) {
    int old = cause;
    cause = c;
    return old;
}

/* Redis's per-cause directives; UNLINK and ASYNC always, SYNC never. */
static int cause_allows(void) {
    switch (cause) {
    case LF_USER_DEL: return cfg_get(lazyfree_lazy_user_del) != 0;
    case LF_UNLINK: return 1;
    case LF_EXPIRE: return cfg_get(lazyfree_lazy_expire) != 0;
    case LF_EVICT: return cfg_get(lazyfree_lazy_eviction) != 0;
    case LF_SYNC: return 0;
    default: return cfg_get(lazyfree_lazy_server_del) != 0;
    }
}

int lazyfree_wanted(size_t bytes) { return enabled && !on_lazy_thread && bytes > LAZYFREE_BYTES && cause_allows(); }

static void push(void (*free_fn)(void *), void *obj) {
    pthread_once(&once, start);
    job *j = zmalloc(sizeof *j);
    j->next = NULL;
    j->free_fn = free_fn;
    j->obj = obj;
    if (!started) { /* no thread: free here */
        run(j);
        return;
    }
    __atomic_add_fetch(&pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&lock);
    if (tail) tail->next = j;
    else head = j;
    tail = j;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

void lazyfree_obj(void (*free_fn)(void *obj), void *obj) {
    if (!enabled || on_lazy_thread) free_fn(obj);
    else push(free_fn, obj);
}

void lazyfree_table(table *t) {
    if (!enabled || on_lazy_thread) table_destroy(&t, entry_free);
    else push(NULL, t);
}

long lazyfree_pending(void) { return __atomic_load_n(&pending, __ATOMIC_RELAXED); }
long lazyfree_freed(void) { return __atomic_load_n(&freed, __ATOMIC_RELAXED); }
void lazyfree_reset_stats(void) { __atomic_store_n(&freed, 0, __ATOMIC_RELAXED); }
int lazyfree_wanted_effort(size_t allocations) {
    return enabled && !on_lazy_thread && allocations > LAZYFREE_EFFORT && cause_allows();
}
