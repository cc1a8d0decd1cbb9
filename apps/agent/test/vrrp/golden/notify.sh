#!/bin/sh
# Rendered by tern-agent (vrrp): keepalived runs this on every state change
# as `notify.sh INSTANCE NAME STATE PRIORITY`; the agent watches the file.
printf '%s %s %s %s\n' "$(date +%s.%N)" "$2" "$3" "$4" >> '/run/tern/vrrp/transitions.log'
