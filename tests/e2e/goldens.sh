# Regression anchors (goldens/): a golden made today from goldens/sample/ says exactly what
# goldens/EXPECTED.tsv says (hashes by sha256sum, statistics by hand), and the golden file
# written by golden-dump 0.1.0 still reads, verifies and compares equal.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
g=$GOLDEN_ROOT/goldens

# flatten golden-dump's JSON listing to "name dtype shape sha256 count nan posinf neginf zero
# min max mean std" rows
flatten() {
    awk '
    /"name":/     { if (name != "") print row; gsub(/[",]/, "", $2); name = $2; row = name; shape = ""; inshape = 0; next }
    /"shape": \[/ { inshape = 1; next }
    inshape && /\]/ { inshape = 0; row = row " " (shape == "" ? "scalar" : shape); next }
    inshape       { v = $1; gsub(/,/, "", v); shape = (shape == "" ? v : shape "x" v); next }
    /"(dtype|sha256)":/ { v = $2; gsub(/[",]/, "", v); vals[$1] = v }
    /"dtype":/    { row = row " " v }
    /"(count|nan_count|posinf_count|neginf_count|zero_count|min|max|mean|std)":/ {
                    v = $2; gsub(/,/, "", v); row = row " " v }
    /"sha256":/   { row = row " " v }
    END { if (name != "") print row }' "$1"
}

# compare one flattened row with one EXPECTED.tsv row; numbers to 1e-12 relative
check_rows() {
    awk -F'\t' -v got_file="$1" '
    BEGIN { while ((getline line < got_file) > 0) { split(line, f, " "); got[f[1]] = line } }
    /^#/ { next }
    {
        name = $1
        if (!(name in got)) { print "missing " name; bad++; next }
        split(got[name], f, " ")
        # got: name dtype shape count sha256 nan posinf neginf zero min max mean std
        split($13, q, "/"); want_std = sqrt(q[1] / q[2])
        if (f[2] != $2 || f[3] != $3 || f[5] != $4) { print name ": dtype/shape/sha256 differ: " got[name]; bad++ }
        if (f[4] != $5 || f[6] != $6 || f[7] != $7 || f[8] != $8 || f[9] != $9) { print name ": counts differ: " got[name]; bad++ }
        w[1] = $10 + 0; w[2] = $11 + 0; w[3] = $12 + 0; w[4] = want_std
        for (k = 1; k <= 4; k++) {
            d = f[9 + k] - w[k]; if (d < 0) d = -d
            s = w[k] < 0 ? -w[k] : w[k]
            if (d > 1e-12 * s + 1e-300) { print name ": statistic " k " is " f[9 + k] ", expected " w[k]; bad++ }
        }
    }
    END { exit bad != 0 }' "$g/EXPECTED.tsv"
}

expect_exit "dump the sample" 0 golden-dump -o today.h5 "$g/sample"
golden-dump --list today.h5 --json today.json > /dev/null 2>&1
flatten today.json > today.rows
if check_rows today.rows > why.txt; then ok "today's golden matches EXPECTED.tsv"
else notok "today's golden matches EXPECTED.tsv" "$(head -3 why.txt)"; fi

golden-dump --list "$g/sample-v1.h5" --json v1.json > /dev/null 2>&1
flatten v1.json > v1.rows
if check_rows v1.rows > why.txt; then ok "the 0.1.0 golden still reads as EXPECTED.tsv says"
else notok "the 0.1.0 golden still reads as EXPECTED.tsv says" "$(head -3 why.txt)"; fi
expect_exit "the 0.1.0 golden verifies" 0 golden-dump --verify "$g/sample-v1.h5"
expect_exit "the 0.1.0 golden compares equal to today's" 0 golden-diff "$g/sample-v1.h5" today.h5
