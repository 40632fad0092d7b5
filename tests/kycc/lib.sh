# Sourced by the kycc test scripts: what each needs before it starts.
# kycc_need_libclang: skip (77) with a message where libclang's Python bindings, which kycc needs, are missing.
kycc_need_libclang() {
    if ! python3 -c 'import clang.cindex' 2>/dev/null; then
        echo "SKIPPED: libclang's Python bindings are missing (make deps installs them: pip install libclang)"
        exit 77
    fi
}
