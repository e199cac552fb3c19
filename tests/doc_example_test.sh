#!/usr/bin/env bash
# A doc's fenced code block of LANG must be FILE exactly, so what the doc shows is the program
# the examples build and run:  doc_example_test.sh DOC LANG FILE
set -euo pipefail
block=$(awk -v open="\`\`\`$2" '$0 == open { on = 1; next } /^```$/ { on = 0 } on' "$1")
if [ -z "$block" ]; then
  echo "$1 has no \`\`\`$2 block" >&2
  exit 1
fi
diff <(printf '%s\n' "$block") "$3" && echo "$1 shows $3 as it is"
