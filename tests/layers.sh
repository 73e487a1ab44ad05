#!/bin/sh
# tests/layers.sh — the include graph follows the layers (docs/architecture.md):
# fails, listing each one, when an #include runs from a lower folder to a
# higher one, or from one kernel family to another.
#   sh tests/layers.sh [ROOT]      ROOT: the repository (default: .)

# The harness's folders, lowest first: a file includes from its own folder
# and the folders before it. Its files include each other by bare name
# (the Makefile puts every folder on the include path), so a header's name
# must be unique among them.
HARNESS_LAYERS="ops analysis measure store cli"

# The kernels: kernels/*.h are the base and KERNEL_FRAME the frame every
# family builds on. A family (any other folder of kernels/) includes from
# the base, the frame and its own folder; the frame from the base and
# itself; the base from itself. KERNEL_TEMPLATES: folder=family, the ISA
# folders that compile a family's templates, and so include from it too.
KERNEL_FRAME="frame"
KERNEL_TEMPLATES="avx2=simd avx512=simd avx512_bf16=simd neon=simd neon_bf16=simd"

cd "${1:-.}" || exit 2
for dir in harness/*/; do
    dir=${dir%/}
    case " $HARNESS_LAYERS " in
    *" ${dir#harness/} "*) ;;
    *) echo "layers: $dir is in no layer: add it to HARNESS_LAYERS in tests/layers.sh" >&2
       exit 1 ;;
    esac
done

# The sources, whose names have no spaces: awk reads their list first (the
# headers an include may name), then each of them.
files=$(find harness kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
# shellcheck disable=SC2086 # $files is split into names on purpose
printf '%s\n' "$files" | awk -v harness_layers="$HARNESS_LAYERS" -v frame="$KERNEL_FRAME" \
    -v templates="$KERNEL_TEMPLATES" '
function folder_of(path, parts, n) {   # kernels/x.h -> "", kernels/d/x.h -> "d"
    n = split(path, parts, "/")
    return n > 2 ? parts[2] : ""
}
function normalize(path, parts, n, out, k, i) {   # a/b/../c -> a/c
    n = split(path, parts, "/")
    k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "." || parts[i] == "")
            continue
        if (parts[i] == ".." && k > 0 && out[k] != "..")
            k--
        else
            out[++k] = parts[i]
    }
    path = out[1]
    for (i = 2; i <= k; i++)
        path = path "/" out[i]
    return path
}
function bad(why) {
    printf "layers: %s:%d includes \"%s\": %s\n", FILENAME, FNR, name, why
    violations++
}
BEGIN {
    n = split(harness_layers, h, " ")
    for (i = 1; i <= n; i++) {
        rank[h[i]] = i
        below[h[i]] = (i > 1 ? below[h[i - 1]] ", " : "") h[i]
    }
    n = split(templates, t, " ")
    for (i = 1; i <= n; i++) {
        split(t[i], pair, "=")
        template_of[pair[1]] = pair[2]
    }
}
FNR == NR {   # the list of files
    exists[$0] = 1
    if ($0 ~ /^harness\/[^\/]+\/[^\/]+\.h$/) {
        split($0, parts, "/")
        if (parts[3] in harness_home)
            dup[parts[3]] = harness_home[parts[3]] " and harness/" parts[2]
        harness_home[parts[3]] = parts[2]
    }
    next
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
    name = $0
    sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", name)
    sub(/".*/, "", name)
    checked++
    if (FILENAME ~ /^harness\//) {
        split(FILENAME, parts, "/")
        from = parts[2]
        if (name in dup) {
            bad("a header of that name is in harness/" dup[name])
            next
        }
        if (!(name in harness_home))
            next   # the library, generated or system: below the harness
        to = harness_home[name]
        if (rank[to] > rank[from])
            bad("harness/" to " is above harness/" from ", which includes only from " below[from])
        next
    }
    dir = FILENAME
    sub(/\/[^\/]*$/, "", dir)
    target = normalize(dir "/" name)
    if (!(target in exists))
        next   # attn.h (include/) or a system header
    from = folder_of(FILENAME)
    to = folder_of(target)
    if (to == "" || to == from || (from != "" && to == frame) ||
        (from in template_of && template_of[from] == to))
        next
    if (from == "")
        bad("kernels/*.h and *.c include only from kernels/*.h")
    else if (from == frame)
        bad("the frame (kernels/" frame "/) includes only from kernels/*.h and itself")
    else
        bad("kernels/" from "/ includes only from kernels/*.h, kernels/" frame "/ and itself" \
            (from in template_of ? ", and kernels/" template_of[from] "/" : "") \
            " (what two families share belongs in the frame)")
}
END {
    if (violations) {
        printf "layers: %d of %d includes run against the layers (docs/architecture.md)\n", \
               violations, checked
        exit 1
    }
    printf "layers: %d includes, none against the layers\n", checked
}
' - $files
