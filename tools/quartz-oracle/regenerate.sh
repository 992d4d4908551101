#!/bin/sh
# Regenerates tests/data/cron/quartz_vectors.tsv from Quartz 2.3.2.
# Needs java + javac (17), python3 and Debian's libquartz2-java (or QUARTZ_JAR=/path/to/quartz.jar).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
jar=${QUARTZ_JAR:-/usr/share/java/quartz2.jar}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

javac -d "$work" -cp "$jar" "$here/QuartzOracle.java"
python3 "$here/gen_cases.py" > "$work/cases.tsv"
java -cp "$work:$jar" QuartzOracle < "$work/cases.tsv" > "$work/answers.tsv"
{
    cat <<'HEADER'
# Quartz 2.3.2 CronExpression answers; regenerate with tools/quartz-oracle/regenerate.sh.
# EXPR<TAB>FROM_EPOCH_MS<TAB>ZONE<TAB>ANSWER. ANSWER: INVALID<TAB>message | ERROR<TAB>exception |
# TIMEOUT | up to 5 successive fire times in epoch ms (none when the schedule has ended).
# In EXPR, \t stands for a tab and \\ for a backslash.
HEADER
    paste "$work/cases.tsv" "$work/answers.tsv"
} > "$root/tests/data/cron/quartz_vectors.tsv"
echo "wrote $(grep -vc '^# ' "$root/tests/data/cron/quartz_vectors.tsv") cases"
