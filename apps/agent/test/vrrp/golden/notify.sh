#!/bin/sh
# Rendered by tern-agent (vrrp): keepalived starts this once with its notify FIFO
# as the last argument and writes every VRRP transition to it, in order; each state
# change becomes one line of the file the agent watches.
trap '' TERM
for fifo; do :; done
# The instance name comes in double quotes: they separate fields like spaces.
while IFS=' "' read -r kind name state priority; do
  case "$kind $state" in
    "INSTANCE MASTER" | "INSTANCE BACKUP" | "INSTANCE FAULT" | "INSTANCE STOP" | "INSTANCE DELETED") ;;
    *) continue ;;
  esac
  printf '%s %s %s %s\n' "$(date +%s.%N)" "$name" "$state" "$priority" >> '/run/tern/vrrp/transitions.log'
done < "$fifo"
