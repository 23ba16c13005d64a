#!/usr/bin/env bash
# The Debian tools the tests use, installed where they are missing and this machine can:
#   msgfmt (gettext)            po-i18n check --msgfmt, catalog tests
#   chromium                    browser tests and the Lighthouse audit
#   a Japanese font (fonts-noto-cjk)
#                               the same: without one, Chromium looks for a fallback glyph by
#                               glyph and draws empty boxes, a page no reader sees (Android,
#                               which Lighthouse's mobile preset emulates, ships Noto Sans CJK)
#   slurmctld, slurmd, sbatch, munged (slurmctld slurmd slurm-client munge)
#                               the Slurm tests, a two-node cluster on this machine
# Installs with apt-get when run as root on Debian; elsewhere it says what is missing
# and the tests that need it are skipped with that reason (under CI=true they fail).
set -euo pipefail
declare -A package_of=([msgfmt]=gettext [chromium]=chromium [slurmctld]=slurmctld [slurmd]=slurmd
                       [sbatch]=slurm-client [munged]=munge)
missing=()
for tool in msgfmt chromium slurmctld slurmd sbatch munged; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || missing+=("${package_of[$tool]}")
done
[ -n "$(fc-list :lang=ja family 2>/dev/null)" ] || missing+=(fonts-noto-cjk)  # no pipe: grep -q may end it early (pipefail)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages the tests use: ${missing[*]}"
  apt-get update -qq
  # Slurm's recommended packages are not needed (shared/SLURM-FACTS.md); Chromium's are
  # (fonts), so only Slurm and munge go without them.
  slurm=() other=()
  for p in "${missing[@]}"; do case $p in slurm*|munge) slurm+=("$p");; *) other+=("$p");; esac; done
  [ ${#other[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${other[@]}" >/dev/null
  [ ${#slurm[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${slurm[@]}" >/dev/null
else
  echo "not installed (tests that need them are skipped): ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
fi
