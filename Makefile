# shoal build. `make` builds build/shoal-server and build/libshoal.a.
# `make run` / `make test` are the README's two commands (they install missing
# Debian packages first through scripts/deps.sh).
BUILD   ?= build
CC      ?= gcc
OPT     ?= -O2
SAN     ?=
CFLAGS  := -std=gnu11 $(OPT) -g -Wall -Wextra -Werror -Wno-unused-parameter \
           -fno-strict-aliasing -pthread -D_GNU_SOURCE -Isrc -I/usr/include/lua5.1 $(SAN) $(EXTRA_CFLAGS)
LDLIBS  := -lmimalloc -llzf -llua5.1-cjson -llua5.1-bitop -llua5.1 -lssl -lcrypto -lm -pthread

LIB_SRC := $(wildcard src/lib/*.c src/proto/*.c src/core/*.c src/shard/*.c src/net/*.c src/cmd/*.c src/persist/*.c src/repl/*.c) \
           $(filter-out src/server/main.c,$(wildcard src/server/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)

all: $(BUILD)/shoal-server $(BUILD)/libshoal.a

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libshoal.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/shoal-server: $(BUILD)/src/server/main.o $(BUILD)/libshoal.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/unit/%: tests/unit/%.c $(BUILD)/libshoal.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

# Sanitizer build lives in its own directory so it never mixes objects.
asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DSHOAL_LIBC_MALLOC" all

fuzz:
	bash tests/fuzz/build.sh

run: 
	bash scripts/deps.sh
	$(MAKE) all
	$(BUILD)/shoal-server shoal.conf

test:
	bash scripts/deps.sh
	bash scripts/test.sh

clean:
	rm -rf build build-asan build-fuzz

.PHONY: all unit asan fuzz run test clean
-include $(LIB_OBJ:.o=.d) $(BUILD)/src/server/main.d
