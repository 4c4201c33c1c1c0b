/* suggest.c - the closest names to an unknown one (see suggest.h). */
#include "suggest.h"

#include <stdbool.h>
#include <string.h>

#define SUGGEST_LEN 256

/* Levenshtein distance of a and b (both shorter than SUGGEST_LEN), with
 * one row of the table at a time. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[SUGGEST_LEN];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

size_t suggest_names(const char *want, const char *const *names, size_t n, const char **out, size_t max)
{
	size_t score[SUGGEST_MAX], k = 0, lw = strlen(want);

	if (max > SUGGEST_MAX)
		max = SUGGEST_MAX;
	if (lw >= SUGGEST_LEN || max == 0)
		return 0;
	size_t limit = lw / 3 > 2 ? lw / 3 : 2;
	for (size_t i = 0; i < n; i++) {
		const char *nm = names[i];
		size_t ln = strlen(nm);
		if (ln >= SUGGEST_LEN || strcmp(nm, want) == 0)
			continue;
		size_t d = edit_distance(want, lw, nm, ln);
		/* a family of names around the one asked for: rank it by how
		 * much longer or shorter it is, as a distance would */
		bool family = strstr(nm, want) || strstr(want, nm);
		if (d > limit && !family)
			continue;
		/* insert into the sorted list of the best max so far */
		size_t at = k;
		while (at > 0 && (score[at - 1] > d || (score[at - 1] == d && strcmp(out[at - 1], nm) > 0)))
			at--;
		if (at >= max)
			continue;
		size_t last = k < max ? k : max - 1;
		for (size_t j = last; j > at; j--) {
			score[j] = score[j - 1];
			out[j] = out[j - 1];
		}
		score[at] = d;
		out[at] = nm;
		if (k < max)
			k++;
	}
	return k;
}
