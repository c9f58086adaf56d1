# vecsync's usearch binding (graph.cpp), built against the headers and NumKong sources of the
# installed `usearch` package, with the same defines as that package's own addon.
# Built by scripts/native/build-graph.sh; see native/README.md.
{
    "variables": {
        "numkong_root": "../../node_modules/usearch/numkong",
    },
    "includes": ["../../node_modules/usearch/numkong/numkong.gypi"],
    "targets": [
        {
            "target_name": "vecsync_graph",
            "sources": ["graph.cpp"],
            "dependencies": [
                "<!(node -p \"require('node-addon-api').gyp\")",
                "numkong_lib",
            ],
            "cflags": ["-fexceptions", "-Wno-unknown-pragmas", "-Wno-maybe-uninitialized"],
            "cflags_cc": ["-fexceptions", "-Wno-unknown-pragmas", "-Wno-maybe-uninitialized", "-std=c++17", "-O3"],
            "include_dirs": [
                "<!@(node -p \"require('node-addon-api').include\")",
                "../../node_modules/usearch/include",
            ],
            "defines": ["USEARCH_USE_NUMKONG=1", "NK_DYNAMIC_DISPATCH=1", "USEARCH_USE_OPENMP=0", "NAPI_VERSION=8"],
        }
    ]
}
