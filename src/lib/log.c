/* log.c - see log.h. */
#include "lib/log.h"
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_fd = 1;
static int log_lvl = LOG_NOTICE;
static const char *names[] = {"debug", "verbose", "notice", "warning", "nothing"};
char log_role = 'M';

int log_open(const char *path) {
    if (!path || !*path) {
        log_fd = 1;
        return 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    log_fd = fd;
    return 0;
}

void log_set_level(int level) { log_lvl = level; }

int log_level_from_name(const char *name) {
    for (int i = 0; i <= LOG_NOTHING; i++)
        if (!strcasecmp(name, names[i])) return i;
    return -1;
}

const char *log_level_name(int level) {
    return level >= 0 && level <= LOG_NOTHING ? names[level] : "notice";
}

void log_msg(int level, const char *fmt, ...) {
    if (level < log_lvl) return;
    char line[1024];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%d:%c ", (int)getpid(), __atomic_load_n(&log_role, __ATOMIC_RELAXED));
    n += (int)strftime(line + n, sizeof line - (size_t)n, "%d %b %Y %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03d %c ", (int)(tv.tv_usec / 1000),
                  ".-*#"[level > 3 ? 3 : level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    n += m;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(log_fd, line, (size_t)n);
    (void)w;
}
