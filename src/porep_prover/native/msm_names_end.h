/* SPDX-License-Identifier: Apache-2.0 */
#undef SPT
#undef AFF
#undef XYZZ
#undef GN
#undef MN
#undef FN
#undef EC_CAT
#undef EC_CAT2
#undef EC_CAT3
#undef EC_CATX
