pragma circom 2.0.0;

// 4 public inputs, 4 private witnesses, 3 public outputs: products and a sum,
// so that public.json holds outputs first, then inputs.
template MultiPub() {
    signal input pa[4];
    signal input w[4];
    signal output s;
    signal output p0;
    signal output p1;
    signal t[4];
    for (var i = 0; i < 4; i++) {
        t[i] <== pa[i] * w[i];
    }
    p0 <== t[0] * t[1];
    p1 <== t[2] * t[3];
    s <== p0 + p1 + w[0];
}

component main {public [pa]} = MultiPub();
