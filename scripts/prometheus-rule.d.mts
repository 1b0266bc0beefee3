/** Types of scripts/prometheus-rule.mjs (what the tests use). */
export const ALERTS: string;
export const PROMETHEUS_RULE: string;
export function renderPrometheusRule(alertsText: string): string;
