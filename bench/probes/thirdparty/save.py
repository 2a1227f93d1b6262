#!/usr/bin/env python3
# usage: save.py ESCAPED_FILE OUT_PATH TOTAL_CHARS
# ESCAPED_FILE holds the JSON string body (escaped, no surrounding quotes) as returned by read_file.
import json, sys, os
src, out, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = open(src, encoding='utf-8').read()
if raw.endswith('\n'):
    raw = raw[:-1]           # heredoc adds one newline
text = json.loads('"' + raw + '"')
crlf = False
if len(text) != total and '\r' not in text and len(text) + text.count('\n') == total:
    # read_file shows CRLF files with bare LF; total_chars counts the CR: restore them
    text = text.replace('\n', '\r\n'); crlf = True
if len(text) != total:
    print(f"LENGTH MISMATCH {out}: got {len(text)} want {total}", file=sys.stderr); sys.exit(1)
os.makedirs(os.path.dirname(out), exist_ok=True)
open(out, 'w', encoding='utf-8', newline='').write(text)
print(f"ok {out} {total}" + (" (CRLF restored)" if crlf else ""))
