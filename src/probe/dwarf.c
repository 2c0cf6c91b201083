/* SPDX-License-Identifier: MIT */
/* dwarf.c: being written */
