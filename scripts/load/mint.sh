# Sourced by the load scripts (load, load-compare, load-mallocs, load-scale, bench-compare): the
# test IdP, the trust store and a file
# of unique, freshly signed ~8 KB responses (cookbook-encoded, one per line, valid for 2 hours),
# minted in two parallel processes and reused while recent and large enough.
# Needs BIN, DIR and MVPD; `mint_responses COUNT` leaves them in $DIR/responses.txt.
mint_responses() {
    local count=$1 half part
    mkdir -p "$DIR/trust/$MVPD"
    [ -f "$DIR/idp/cert.pem" ] || "$BIN" idp keygen --out "$DIR/idp" >/dev/null
    cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
    if [ -f "$DIR/responses.txt" ] && [ "$(wc -l < "$DIR/responses.txt")" -ge "$count" ] \
        && [ -z "$(find "$DIR/responses.txt" -mmin +90)" ]; then
        return
    fi
    echo "minting $count signed responses of ~8 KB ..."
    half=$(( (count + 1) / 2 ))
    for part in 1 2; do
        "$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user load@example.com \
            --ttl 7200 --pad-to 8192 --encoded --count "$half" > "$DIR/responses.$part" &
    done
    wait
    cat "$DIR/responses.1" "$DIR/responses.2" > "$DIR/responses.txt"
    rm -f "$DIR/responses.1" "$DIR/responses.2"
}
