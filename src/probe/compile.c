/* SPDX-License-Identifier: MIT */
/* compile.c: being written */
