/* log.h - leveled logging in Redis's line format
 * ("pid:X dd Mon yyyy hh:mm:ss.mmm * message"), to stdout or a file.
 * Any thread; each line is one write(2). */
#ifndef SHOAL_LOG_H
#define SHOAL_LOG_H

enum { LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE, LOG_WARNING, LOG_NOTHING };

/* Returns 0, or -1 when the file cannot be opened. "" means stdout. */
int log_open(const char *path);
void log_set_level(int level);
int log_level_from_name(const char *name); /* -1 when unknown */
const char *log_level_name(int level);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The role letter after the pid, as Redis writes it: 'M' (master), 'S'
 * while a replica (repl/ sets it; relaxed atomic). */
extern char log_role;
#endif
