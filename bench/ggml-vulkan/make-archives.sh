#!/usr/bin/env bash
# Makes the source archives bench/ggml-vulkan/build.sh unpacks on the GPU
# server, in .peers/ at the repository root (git-ignored: fetched sources
# are never committed), from bare git mirrors of the upstream repositories
# under $M (default /work/.mirror/OWNER+NAME/repo, as this workplace's
# fetch tool leaves them; any bare clones do). Run on the development
# machine; records the upstream commits in .peers/COMMITS.
#
# Pins: ggml = newest stored snapshot (the commit bench/ggml-peers.sh is
# tested against); shaderc = newest snapshot; glslang, SPIRV-Tools and
# SPIRV-Headers = the revisions shaderc's DEPS names (they also agree with
# glslang's known_good.json and SPIRV-Tools' DEPS); Vulkan-Headers = newest
# snapshot (v1.4.359), whose include/vulkan/vulkan_structs.hpp the mirror
# lacks (too large): it is regenerated with Vulkan-Hpp's VulkanHppGenerator
# at Vulkan-Hpp 89e6fb2b ("Update Vulkan-Headers to v1.4.359") from the same
# vk.xml, see VKHPP below (not clang-formatted).
set -eu
M=${M:-/work/.mirror}
out=$(cd "$(dirname "$0")/../.." && pwd)/.peers
mkdir -p "$out"
GGML=d99724f2b141fed9e1a9f402213506c081433465
SHADERC=e68868016406f1b53a0fbf09402b79b846e8bca4
GLSLANG=168d452a4f460d24b588fed08477a81c44ee27a1
SPVTOOLS=b707790a898e44038547df54580022fc1cf89c3d
SPVHEADERS=29981f65241605e08b0ede4cfeb999fe3b723c6a
VKHEADERS=f9973cd97e6f3584707e7ef1c425e336f1b92a5b
VKHPP=89e6fb2b   # KhronosGroup/Vulkan-Hpp, generator only
TINYXML2=ff61650517cc32d524689366f977716e73d4f924
stage=${STAGE:-/tmp/peers-stage}
rm -rf "$stage"
mkdir -p "$stage/src" "$stage/vkhpp/tinyxml2" "$stage/vkhpp/vulkan"
cd "$stage/src"
arch() { # repo commit prefix pathspec...
  local repo=$1 commit=$2 prefix=$3
  shift 3
  git --git-dir="$M/$repo/repo" archive --prefix="$prefix" "$commit" -- "$@" | tar x
}
arch ggml-org+ggml $GGML ggml/ . ':(exclude)examples' ':(exclude)tests' \
  ':(exclude)docs' ':(exclude).github' ':(exclude)ci'
arch google+shaderc $SHADERC shaderc/ . ':(exclude)kokoro'
arch KhronosGroup+glslang $GLSLANG shaderc/third_party/glslang/ . \
  ':(exclude)Test' ':(exclude)gtests' ':(exclude)kokoro' ':(exclude).github' \
  ':(exclude)ndk_test'
# SPIRV-Tools' top CMakeLists adds test/ unconditionally; test/CMakeLists.txt
# returns at once under SPIRV_SKIP_TESTS, so it alone is kept.
arch KhronosGroup+SPIRV-Tools $SPVTOOLS shaderc/third_party/spirv-tools/ . \
  ':(exclude)test' ':(exclude)kokoro' ':(exclude)docs' ':(exclude).github'
arch KhronosGroup+SPIRV-Tools $SPVTOOLS shaderc/third_party/spirv-tools/ \
  test/CMakeLists.txt
arch KhronosGroup+SPIRV-Headers $SPVHEADERS shaderc/third_party/spirv-headers/ \
  . ':(exclude).github'
arch KhronosGroup+Vulkan-Headers $VKHEADERS vulkan-headers/ . ':(exclude).github' \
  ':(exclude)include/vulkan/vulkan_structs.hpp' ':(exclude)registry/validusage.json' \
  2>/dev/null

# vulkan_structs.hpp: build and run VulkanHppGenerator (about 1 min, 1 core).
cd "$stage/vkhpp"
git --git-dir="$M/KhronosGroup+Vulkan-Hpp/repo" archive $VKHPP -- generator | tar x
git --git-dir="$M/leethomason+tinyxml2/repo" archive $TINYXML2 -- tinyxml2.cpp tinyxml2.h |
  tar x -C tinyxml2
for f in generator/VulkanHppGenerator.cpp generator/VkXMLParser.cpp \
  generator/DependencyParser.cpp tinyxml2/tinyxml2.cpp; do
  nice -n 19 g++ -std=c++20 -O1 -g0 -c -Itinyxml2 -DBASE_PATH="\"$PWD\"" \
    -DVK_SPEC="\"$stage/src/vulkan-headers/registry/vk.xml\"" "$f" -o "$(basename "$f" .cpp).o"
done
g++ -o gen ./*.o -lpthread
./gen >gen.log 2>&1
cp vulkan/vulkan_structs.hpp "$stage/src/vulkan-headers/include/vulkan/"

cd "$stage/src"
export XZ_OPT="-6 -T1"
nice -n 19 tar -cJf "$out/ggml.tar.xz" ggml
nice -n 19 tar -cJf "$out/shaderc-src.tar.xz" shaderc
nice -n 19 tar -cJf "$out/vulkan-headers.tar.xz" vulkan-headers
cat >"$out/COMMITS" <<EOF
ggml            https://github.com/ggml-org/ggml            $GGML  (v0.21.0-2, 2026-08-21)
shaderc         https://github.com/google/shaderc           $SHADERC  (v2026.3-1, 2026-07-16)
glslang         https://github.com/KhronosGroup/glslang     $GLSLANG  (16.4.0, shaderc DEPS)
SPIRV-Tools     https://github.com/KhronosGroup/SPIRV-Tools $SPVTOOLS  (v2026.3, shaderc DEPS)
SPIRV-Headers   https://github.com/KhronosGroup/SPIRV-Headers $SPVHEADERS  (shaderc DEPS)
Vulkan-Headers  https://github.com/KhronosGroup/Vulkan-Headers $VKHEADERS  (v1.4.359)
  include/vulkan/vulkan_structs.hpp regenerated: Vulkan-Hpp $(git --git-dir="$M/KhronosGroup+Vulkan-Hpp/repo" rev-parse $VKHPP) VulkanHppGenerator, tinyxml2 $TINYXML2, unformatted
stripped: ggml examples/ tests/ docs/ ci/ .github/; shaderc kokoro/; glslang Test/ gtests/ kokoro/ ndk_test/ .github/;
          SPIRV-Tools test/ (but test/CMakeLists.txt) kokoro/ docs/ .github/; Vulkan-Headers .github/ registry/validusage.json
EOF
ls -la "$out"
