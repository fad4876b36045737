# Masks, in pass remarks, the figures that follow a profile's numbers rather
# than the pass's decision (h200-measured-profile.test): the profile's name,
# DRAM bandwidth and the times derived from it, the L2 byte cap, the pad (one
# cache line) quoted where nothing is padded.
s/profile '[^']*'/profile 'P'/g
s/profile h200( |:|\))/profile P\1/g
s/profile NVIDIA H200 \([^)]*\)/profile P/g
s/dram [0-9.]+ GB\/s/dram D GB\/s/g
s/[0-9.]+ us/T us/g
s/max-bytes [0-9]+/max-bytes M/g
s/, pad [0-9]+ B from/, pad N B from/g
