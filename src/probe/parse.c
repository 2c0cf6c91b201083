/* SPDX-License-Identifier: MIT */
/* parse.c: being written */
