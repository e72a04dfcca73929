pragma circom 2.0.0;

// x_{i+1} = x_i^2 + 7 for N steps: N constraints, full-field witness values.
template SquareChain(N) {
    signal input x0;
    signal output y;
    signal x[N + 1];
    x[0] <== x0;
    for (var i = 0; i < N; i++) {
        x[i + 1] <== x[i] * x[i] + 7;
    }
    y <== x[N];
}

component main {public [x0]} = SquareChain(250);
