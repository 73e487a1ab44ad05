#!/bin/sh
# examples.sh — the programs of examples/ as a user runs them (built by
# `make examples` against the installed library): examples/bert_pooled.c on
# the tiny BERT checkpoint of tests/fixtures. Its numbers against PyTorch are
# test_fixtures' (the same calls); here: it runs, padding does not leak
# into a sequence (alone or beside a longer one, its pooled output is the
# same), and bad input is refused with a message naming it.
set -u
bin=${1:?usage: examples.sh BUILD/examples}/bert_pooled
model=tests/fixtures/bert_tiny_f32.safetensors
fail=0
err() { echo "examples.sh: FAIL $*" >&2; fail=1; }

out=$("$bin" "$model" --heads 4 1,5,7,9,2 1,3) || err "bert_pooled exited $?"
echo "$out" | grep -q '^tests/fixtures/bert_tiny_f32.safetensors: 2 layers, D 32, 4 heads' \
  || err "no model line: $out"
[ "$(echo "$out" | grep -c '^sequence [01] ')" = 2 ] || err "not two pooled lines: $out"
alone=$("$bin" "$model" --heads 4 1,3 | sed -n 's/^sequence 0 (2 tokens): pooled //p')
batched=$(echo "$out" | sed -n 's/^sequence 1 (2 tokens): pooled //p')
[ -n "$alone" ] && [ -n "$batched" ] || err "no pooled output for 1,3"
echo "$alone|$batched" | awk -F'|' '{
    n = split($1, a, " "); split($2, b, " ");
    for (i = 1; i <= n; i++) if (a[i] != "..." && (a[i] - b[i] > 5e-6 || b[i] - a[i] > 5e-6)) {
        print "padded beside a longer sequence: " $2 "\nalone: " $1; exit 1 } }' \
  || err "a padded sequence's pooled output depends on its batch"

msg=$("$bin" /nonexistent/model.safetensors 1,2 2>&1) && err "a missing file was accepted"
echo "$msg" | grep -q '/nonexistent/model.safetensors' || err "missing file: '$msg'"
msg=$("$bin" "$model" --heads 4 1,50 2>&1) && err "id 50 (vocabulary 50) was accepted"
echo "$msg" | grep -q 'invalid argument' || err "id out of range: '$msg'"
msg=$("$bin" "$model" --heads 5 1,2 2>&1) && err "5 heads for D 32 were accepted"
[ -n "$msg" ] || err "5 heads: no message"

[ $fail = 0 ] && echo "examples.sh: bert_pooled ok"
exit $fail
