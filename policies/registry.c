// SPDX-License-Identifier: MIT
/*
 * policies/registry.c - named presets and knob=value overrides resolved
 * into one struct wb_policy (see policy.h for the spec syntax), and
 * policies loaded from shared objects.
 *
 * A spec is resolved left to right: the preset sets every knob, each
 * override replaces one, a plugin may then change any hook.  The resolved
 * spec (every knob=value) is kept in pol->spec so that each run can record
 * exactly what it ran.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policies/policy.h"
#include "kernel/printk.h"

#define V(x) extern const struct wb_variant wb_variant_##x;
V(nowait_b0) V(nowait_v3a) V(nowait_v3b) V(nowait_v4) V(nowait_v4_r7)
V(nowait_v41) V(nowait_v42) V(nowait_mainline)
V(requeue_base) V(requeue_p2_v3) V(requeue_requeue4) V(requeue_p2_v4)
V(requeue_riw) V(requeue_riw_sync) V(requeue_mainline)
V(skipped_redirty) V(skipped_requeue) V(skipped_requeue_wait)
V(skipped_removed)
V(sbbusy_redirty) V(sbbusy_requeue) V(sbbusy_requeue_wait)
V(cutoff_fixed) V(cutoff_v42) V(cutoff_bg_all)
V(kupdate_fixed) V(kupdate_early) V(progress_pages) V(progress_total)
#undef V

static const struct wb_variant *const variants[] = {
	&wb_variant_nowait_b0, &wb_variant_nowait_v3a, &wb_variant_nowait_v3b,
	&wb_variant_nowait_v4, &wb_variant_nowait_v4_r7,
	&wb_variant_nowait_v41, &wb_variant_nowait_v42,
	&wb_variant_nowait_mainline,
	&wb_variant_requeue_base, &wb_variant_requeue_p2_v3,
	&wb_variant_requeue_requeue4, &wb_variant_requeue_p2_v4,
	&wb_variant_requeue_riw, &wb_variant_requeue_riw_sync,
	&wb_variant_requeue_mainline,
	&wb_variant_skipped_redirty, &wb_variant_skipped_requeue,
	&wb_variant_skipped_requeue_wait, &wb_variant_skipped_removed,
	&wb_variant_sbbusy_redirty, &wb_variant_sbbusy_requeue,
	&wb_variant_sbbusy_requeue_wait,
	&wb_variant_cutoff_fixed, &wb_variant_cutoff_v42,
	&wb_variant_cutoff_bg_all,
	&wb_variant_kupdate_fixed, &wb_variant_kupdate_early,
	&wb_variant_progress_pages, &wb_variant_progress_total,
};

#define NR_VARIANTS (sizeof(variants) / sizeof(variants[0]))

static const char *const knobs[] = {
	"nowait", "requeue", "skipped", "sbbusy", "cutoff", "kupdate",
	"progress",
};

#define NR_KNOBS (sizeof(knobs) / sizeof(knobs[0]))

struct preset {
	const char *name;
	const char *what;
	const char *knobs;	/* values in the order of knobs[] */
};

static const struct preset presets[] = {
	{ "linux-3.1", "before the seed-000 series",
	  "nowait=b0,requeue=base,skipped=redirty,sbbusy=redirty,"
	  "cutoff=fixed,kupdate=fixed,progress=pages" },
	{ "linux-3.2", "what was merged: 3.1 + bg-all (seed 000 L3262-3736)",
	  "nowait=b0,requeue=base,skipped=redirty,sbbusy=redirty,"
	  "cutoff=bg-all,kupdate=fixed,progress=pages" },
	{ "kara-v4.2", "Jan Kara's latest: P1-v4.2 + P2-v4 (L620-834, L3952-4092)",
	  "nowait=v4.2,requeue=p2-v4,skipped=removed,sbbusy=requeue,"
	  "cutoff=v4.2,kupdate=fixed,progress=pages" },
	{ "wu-riw", "Wu Fengguang's requeue_io_wait + kupdate-early + bg-all (L1834-2319)",
	  "nowait=b0,requeue=riw,skipped=requeue-wait,sbbusy=requeue-wait,"
	  "cutoff=bg-all,kupdate=early,progress=total" },
	{ "mainline", "today's requeue_inode and inode_sleep_on_writeback",
	  "nowait=mainline,requeue=mainline,skipped=removed,sbbusy=redirty,"
	  "cutoff=bg-all,kupdate=fixed,progress=pages" },
};

#define NR_PRESETS (sizeof(presets) / sizeof(presets[0]))

const char *const wb_policy_presets[] = {
	"linux-3.1", "linux-3.2", "kara-v4.2", "wu-riw", "mainline", NULL,
};

static const struct wb_variant *find_variant(const char *knob,
					     const char *value)
{
	size_t i;

	for (i = 0; i < NR_VARIANTS; i++)
		if (!strcmp(variants[i]->knob, knob) &&
		    !strcmp(variants[i]->value, value))
			return variants[i];
	return NULL;
}

static int knob_index(const char *knob)
{
	size_t i;

	for (i = 0; i < NR_KNOBS; i++)
		if (!strcmp(knobs[i], knob))
			return (int)i;
	return -1;
}

static void values_of(const char *knob, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < NR_VARIANTS && n < len; i++)
		if (!strcmp(variants[i]->knob, knob))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n ? " " : "", variants[i]->value);
}

static void complain_knob(const char *knob, const char *value)
{
	char vals[256];
	int k = knob_index(knob);

	if (k < 0) {
		pr_err("policy: unknown knob \"%s\" (valid: nowait requeue skipped sbbusy cutoff kupdate progress plugin)",
		       knob);
		return;
	}
	values_of(knob, vals, sizeof(vals));
	pr_err("policy: unknown %s \"%s\" (valid: %s)", knob, value, vals);
}

/* One "knob=value" item; choice[] records the value per knob. */
static int apply_item(struct wb_policy *pol, const char **choice,
		      char *item)
{
	const struct wb_variant *v;
	char *eq = strchr(item, '=');
	int k;

	if (!eq) {
		pr_err("policy: \"%s\" is not knob=value", item);
		return -EINVAL;
	}
	*eq = '\0';
	v = find_variant(item, eq + 1);
	if (!v) {
		complain_knob(item, eq + 1);
		return -EINVAL;
	}
	k = knob_index(item);
	v->apply(pol);
	choice[k] = v->value;
	return 0;
}

static int apply_list(struct wb_policy *pol, const char **choice,
		      const char *list)
{
	char buf[WB_POLICY_SPEC_LEN], *item, *save = NULL;
	int ret;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		ret = apply_item(pol, choice, item);
		if (ret)
			return ret;
	}
	return 0;
}

static const struct preset *find_preset(const char *name)
{
	size_t i;

	for (i = 0; i < NR_PRESETS; i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

/* Load a plugin and let it change the policy. */
static int load_plugin(struct wb_policy *pol, const char *path)
{
	uf_policy_plugin_init_t init;
	void *h;
	int ret;

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pr_err("policy: cannot load plugin %s: %s", path, dlerror());
		return -ENOENT;
	}
	*(void **)&init = dlsym(h, UF_POLICY_PLUGIN_SYMBOL);
	if (!init) {
		pr_err("policy: %s has no %s()", path,
		       UF_POLICY_PLUGIN_SYMBOL);
		dlclose(h);
		return -ELIBBAD;
	}
	ret = init(pol);
	if (ret) {
		pr_err("policy: %s: %s() failed: %s", path,
		       UF_POLICY_PLUGIN_SYMBOL, strerror(-ret));
		dlclose(h);
		return ret;
	}
	if (pol->plugin_handle)
		dlclose(pol->plugin_handle);
	pol->plugin_handle = h;
	return 0;
}

static void write_spec(struct wb_policy *pol, const char **choice,
		       const char *plugin)
{
	size_t i, n;

	n = (size_t)snprintf(pol->spec, sizeof(pol->spec), "%s:", pol->name);
	for (i = 0; i < NR_KNOBS && n < sizeof(pol->spec); i++)
		n += (size_t)snprintf(pol->spec + n, sizeof(pol->spec) - n,
				      " %s=%s", knobs[i], choice[i]);
	if (plugin && n < sizeof(pol->spec))
		snprintf(pol->spec + n, sizeof(pol->spec) - n, " plugin=%s",
			 plugin);
}

/* Split "preset,a=b,plugin=x,c=d"; plugins are applied after the knobs. */
static int resolve_items(struct wb_policy *pol, const char **choice,
			 char *rest, const char **plugin)
{
	char *item, *save = NULL;
	int ret;

	for (item = strtok_r(rest, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (!strncmp(item, "plugin=", 7)) {
			*plugin = item + 7;
			continue;
		}
		ret = apply_item(pol, choice, item);
		if (ret)
			return ret;
	}
	return 0;
}

int wb_policy_resolve(const char *spec, struct wb_policy *pol)
{
	char buf[WB_POLICY_SPEC_LEN], *comma;
	const char *choice[NR_KNOBS] = { 0 };
	const char *plugin = NULL;
	const struct preset *p;
	int ret;

	if (!pol)
		return -EINVAL;
	memset(pol, 0, sizeof(*pol));
	if (!spec)
		spec = WB_POLICY_DEFAULT;
	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	comma = strchr(buf, ',');
	if (comma)
		*comma = '\0';
	p = find_preset(buf);
	if (!p) {
		pr_err("policy: unknown preset \"%s\" (valid: linux-3.1 linux-3.2 kara-v4.2 wu-riw mainline)",
		       buf);
		return -EINVAL;
	}
	snprintf(pol->name, sizeof(pol->name), "%s", p->name);
	ret = apply_list(pol, choice, p->knobs);
	if (!ret && comma)
		ret = resolve_items(pol, choice, comma + 1, &plugin);
	if (!ret && plugin)
		ret = load_plugin(pol, plugin);
	if (ret) {
		wb_policy_release(pol);
		return ret;
	}
	write_spec(pol, choice, plugin);
	return 0;
}

void wb_policy_release(struct wb_policy *pol)
{
	if (pol && pol->plugin_handle) {
		dlclose(pol->plugin_handle);
		pol->plugin_handle = NULL;
	}
}

void wb_policy_list(void (*out)(void *priv, const char *line), void *priv)
{
	char line[512];
	size_t i;

	out(priv, "presets:");
	for (i = 0; i < NR_PRESETS; i++) {
		snprintf(line, sizeof(line), "  %-10s %s", presets[i].name,
			 presets[i].what);
		out(priv, line);
		snprintf(line, sizeof(line), "             %s",
			 presets[i].knobs);
		out(priv, line);
	}
	out(priv, "knobs:");
	for (i = 0; i < NR_VARIANTS; i++) {
		snprintf(line, sizeof(line), "  %s=%-13s %s",
			 variants[i]->knob, variants[i]->value,
			 variants[i]->source);
		out(priv, line);
	}
	out(priv, "  plugin=PATH    a shared object exporting uf_policy_plugin_init()");
}
