#!/bin/bash
# Installed as `python` first on PATH by record.sh, because RULER's prepare.py runs its task scripts
# through a shell as `python <script> ...`. Runs Debian's /usr/bin/python3 with the same arguments;
# when RULER_CHILD_LOG is set, a copy of the script's stderr (RULER's logging: binary-search steps)
# is appended there. stdout/stderr seen by prepare.py are unchanged.
if [ -n "$RULER_CHILD_LOG" ]; then
  exec /usr/bin/python3 "$@" 2> >(tee -a "$RULER_CHILD_LOG" >&2)
fi
exec /usr/bin/python3 "$@"
