/* Reads "op a b" lines (decimal canonical values) and prints the Fq / Fr result,
 * so tests can run the portable and the assembly builds of field.h side by side. */
#include <stdio.h>
#include <string.h>

#include "field.h"

static int read_hex(uint64_t *limbs, int n)
{
    char buf[200];
    if (scanf("%199s", buf) != 1) return 0;
    memset(limbs, 0, 8 * (size_t)n);
    size_t len = strlen(buf);
    for (size_t i = 0; i < len; i++) {
        char ch = buf[len - 1 - i];
        uint64_t d = (ch >= '0' && ch <= '9') ? (uint64_t)(ch - '0') : (uint64_t)(ch - 'a' + 10);
        limbs[i / 16] |= d << (4 * (i % 16));
    }
    return 1;
}

static void print_hex(const uint64_t *limbs, int n)
{
    for (int i = n - 1; i >= 0; i--) printf("%016llx", (unsigned long long)limbs[i]);
    printf("\n");
}

int main(void)
{
    char op[8], field[4];
    while (scanf("%7s %3s", field, op) == 2) {
        if (field[1] == 'q') {
            fq_t a, b, r;
            read_hex(a.l, 6);
            read_hex(b.l, 6);
            fq_to_mont(&a, &a);
            fq_to_mont(&b, &b);
            if (op[0] == 'a') fq_add(&r, &a, &b);
            else if (op[0] == 's') fq_sub(&r, &a, &b);
            else fq_mul(&r, &a, &b);
            fq_from_mont(&r, &r);
            print_hex(r.l, 6);
        } else {
            fr_t a, b, r;
            read_hex(a.l, 4);
            read_hex(b.l, 4);
            fr_to_mont(&a, &a);
            fr_to_mont(&b, &b);
            if (op[0] == 'a') fr_add(&r, &a, &b);
            else if (op[0] == 's') fr_sub(&r, &a, &b);
            else fr_mul(&r, &a, &b);
            fr_from_mont(&r, &r);
            print_hex(r.l, 4);
        }
    }
    return 0;
}
