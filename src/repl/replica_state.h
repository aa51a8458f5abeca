/* replica_state.h - what replica.c (REPLICAOF, shard 0's side, INFO) and
 * replica_link.c (the link thread) share; internal to src/repl/.
 *
 * Everything here is guarded by repl_lock unless it says atomic. Each
 * REPLICAOF bumps repl_gen: a sync of an older generation stops at its
 * next poll, may no longer change the state, and its payload is dropped. */
#ifndef SHOAL_REPLICA_STATE_H
#define SHOAL_REPLICA_STATE_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

extern pthread_mutex_t repl_lock;
extern pthread_cond_t repl_wake; /* the link thread waits on it for work */
extern int repl_st;              /* atomic: REPL_* */
extern uint64_t repl_gen;        /* atomic reads; written under repl_lock */
extern char repl_host[256];
extern int repl_port;
/* the payload being read (atomics, for INFO) */
extern int64_t repl_xfer_size, repl_xfer_read, repl_xfer_last_io;
/* masterauth, masteruser, replica-announce-ip as their apply hooks copied
 * them (the link thread may not read cfg's strings: CONFIG SET frees them) */
extern char *repl_auth_pass, *repl_auth_user, *repl_announce_ip;
extern size_t repl_auth_pass_len;

/* A payload read, waiting for shard 0 to load it (repl_have_pend). */
typedef struct repl_handoff {
    int fd;
    uint64_t gen;
    uint8_t *rdb;
    size_t n;
    char *rest; /* bytes after the payload: the start of the stream */
    size_t nrest;
    int64_t offset;
    char replid[41];
} repl_handoff;
extern repl_handoff repl_pend;
extern int repl_have_pend;

static inline void repl_set_state(int s) { __atomic_store_n(&repl_st, s, __ATOMIC_RELAXED); }
static inline int repl_aborted(uint64_t g) { return __atomic_load_n(&repl_gen, __ATOMIC_ACQUIRE) != g; }
/* Forgets a payload not loaded yet. Under repl_lock. */
void repl_drop_pend_locked(void);
/* Starts the link thread once (replica_link.c). */
void repl_link_start(void);
#endif
