// Which named statement (store/sql_catalog.hpp) fills each of a store's statements: one list
// for both engines, of the statements both have. A statement only one engine has belongs to
// that engine's operations (store/<engine>/<area>_ops.cpp), which ask for it themselves.
#include "store/statements.hpp"

#include "store/audit_store.hpp"
#include "store/events_store.hpp"
#include "store/intake_store.hpp"
#include "store/legacy_items_store.hpp"
#include "store/listing_store.hpp"
#include "store/node_lease_store.hpp"
#include "store/numbering_store.hpp"
#include "store/receipts_store.hpp"
#include "store/scheduling_store.hpp"
#include "store/sql_catalog.hpp"
#include "store/stock_store.hpp"

namespace onceorder::store {
namespace {

IntakeSql intake_sql(const SqlCatalog& c) {
  return {
      .insert_receipt = c.get("in_insert_receipt"),
      .find_receipt = c.get("in_find_receipt"),
      .lock_stock = c.get("in_lock_stock"),
      .out_of_stock = c.get("in_out_of_stock"),
      .get_order = c.get("in_get_order"),
      .get_lines = c.get("in_get_lines"),
      .lock_order = c.get("in_lock_order"),
      .lock_sources = c.get("in_lock_sources"),
      .cancel_sources = c.get("in_cancel_sources"),
      .abort_items = c.get("in_abort_items"),
      .count_production = c.get("in_count_production"),
      .lock_reserved_stock = c.get("in_lock_reserved_stock"),
      .restore = c.get("in_restore"),
      .mark_cancelled = c.get("in_mark_cancelled"),
  };
}

NumberingSql numbering_sql(const SqlCatalog& c) {
  return {
      .find_receipt = c.get("num_find_receipt"),
      .insert_receipt = c.get("num_insert_receipt"),
      .lock_scope = c.get("num_lock_scope"),
      .read_scope = c.get("num_read_scope"),
      .upsert_format = c.get("num_upsert_format"),
      .ensure_scope = c.get("num_ensure_scope"),
      .scope_info = c.get("num_scope_info"),
      .list_documents = c.get("num_list_documents"),
      .get_document = c.get("num_get_document"),
      .existing_values = c.get("num_existing_values"),
      .insert_legacy = c.get("num_insert_legacy"),
      .raise_last = c.get("num_raise_last"),
      .find_receipts = c.get("num_find_receipts"),
  };
}

SchedulingSql scheduling_sql(const SqlCatalog& c) {
  return {
      .insert_source = c.get("sch_insert_source"),
      .source_quantity = c.get("sch_source_quantity"),
      .insert_run = c.get("sch_insert_run"),
      .insert_candidates = c.get("sch_insert_candidates"),
      .insert_item_for = c.get("sch_insert_item_for"),
      .key_state = c.get("sch_key_state"),
      .set_run_status = c.get("sch_set_run_status"),
      .heartbeat = c.get("sch_heartbeat"),
      .abort_run_waits = c.get("sch_abort_run_waits"),
      .fail_run_processing = c.get("sch_fail_run_processing"),
      .claim = c.get("sch_claim"),
      .fence_success = c.get("sch_fence_success"),
      .mark_failed = c.get("sch_mark_failed"),
      .abort_if_cancelled = c.get("sch_abort_if_cancelled"),
      .fence_many = c.get("sch_fence_many"),
      .abort_orphans = c.get("sch_abort_orphans"),
      .dead_runs = c.get("sch_dead_runs"),
      .orphan_waits = c.get("sch_orphan_waits"),
      .expired_leases = c.get("sch_expired_leases"),
      .get_run = c.get("sch_get_run"),
      .list_runs = c.get("sch_list_runs"),
      .list_items = c.get("sch_list_items"),
      .list_production = c.get("sch_list_production"),
      .stuck_orders = c.get("sch_stuck_orders"),
      .run_remaining = c.get("sch_run_remaining"),
      .list_exhausted = c.get("sch_list_exhausted"),
      .requeue_key = c.get("sch_requeue_key"),
      .request_stop = c.get("sch_request_stop"),
  };
}

LegacyItemsSql legacy_items_sql(const SqlCatalog& c) {
  return {
      .insert_staged = c.get("leg_insert_staged"),
      .has_resolution = c.get("leg_has_resolution"),
      .pending = c.get("leg_pending"),
      .pending_before_resolution = c.get("leg_pending_before_resolution"),
      .live_rows = c.get("leg_live_rows"),
      .missing_sources = c.get("leg_missing_sources"),
      .insert_run = c.get("leg_insert_run"),
      .insert_item = c.get("leg_insert_item"),
      .mark_moved = c.get("leg_mark_moved"),
      .abort_item = c.get("leg_abort_item"),
      .resolve_staged = c.get("leg_resolve_staged"),
      .settle_moved = c.get("leg_settle_moved"),
      .note_moved = c.get("leg_note_moved"),
  };
}

ReceiptsSql receipts_sql(const SqlCatalog& c) {
  return {
      .expire_order = c.get("rc_expire_order"),
      .expire_document = c.get("rc_expire_document"),
      .expire_request = c.get("rc_expire_request"),
      .claim_request = c.get("rc_claim_request"),
      .find_request = c.get("rc_find_request"),
      .answer_request = c.get("rc_answer_request"),
  };
}

StockSql stock_sql(const SqlCatalog& c) {
  return {
      .insert_sku = c.get("in_insert_sku"),
      .lock_sku = c.get("in_lock_sku"),
      .set_price = c.get("in_set_price"),
      .adjust = c.get("in_adjust"),
      .get_sku = c.get("in_get_sku"),
      .ledger = c.get("in_ledger"),
  };
}

ListingSql listing_sql(const SqlCatalog& c) {
  return {
      .list_orders = c.get("ls_list_orders"),
      .list_customer_orders = c.get("ls_list_customer_orders"),
      .order_receipts = c.get("ls_order_receipts"),
      .list_skus = c.get("ls_list_skus"),
      .list_warehouses = c.get("ls_list_warehouses"),
      .follow_orders = c.get("ls_follow_orders"),
      .list_scopes = c.get("ls_list_scopes"),
      .list_claims = c.get("ls_list_claims"),
      .item_events = c.get("ls_item_events"),
      .order_head = c.get("ls_order_head"),
      .order_sources = c.get("ls_order_sources"),
      .order_events = c.get("ls_order_events"),
  };
}

NodeLeaseSql node_lease_sql(const SqlCatalog& c) {
  return {
      .candidate = c.get("in_lease_candidate"),
      .take = c.get("in_lease_take"),
      .renew = c.get("in_lease_renew"),
      .release = c.get("in_lease_release"),
      .leader_take = c.get("leader_take"),
      .leader_renew = c.get("leader_renew"),
      .leader_release = c.get("leader_release"),
  };
}

AuditSql audit_sql(const SqlCatalog& c) {
  return {
      .record = c.get("au_record"),
      .finish = c.get("au_finish"),
      .list = c.get("au_list"),
      .orders_per_minute = c.get("au_orders_per_minute"),
      .items_per_minute = c.get("au_items_per_minute"),
      .numbers_per_minute = c.get("au_numbers_per_minute"),
  };
}

EventsSql events_sql(const SqlCatalog& c) {
  return {
      .feed = c.get("ev_feed"),
      .prime = c.get("ev_prime"),
      .head = c.get("ev_head"),
      .lag = c.get("ev_lag"),
      .held = c.get("ev_held"),
      .consumer_get = c.get("ev_consumer_get"),
      .consumer_list = c.get("ev_consumer_list"),
      .consumer_put = c.get("ev_consumer_put"),
      .consumer_delete = c.get("ev_consumer_delete"),
      .endpoint_get = c.get("ev_endpoint_get"),
      .endpoint_target = c.get("ev_endpoint_target"),
      .endpoint_list = c.get("ev_endpoint_list"),
      .endpoint_count = c.get("ev_endpoint_count"),
      .endpoint_put = c.get("ev_endpoint_put"),
      .endpoint_delete = c.get("ev_endpoint_delete"),
      .endpoint_lock = c.get("ev_endpoint_lock"),
      .endpoint_advance = c.get("ev_endpoint_advance"),
      .insert_deliveries = c.get("ev_insert_deliveries"),
      .delivery_counts = c.get("ev_delivery_counts"),
      .claim = c.get("ev_claim"),
      .settle = c.get("ev_settle"),
      .reap = c.get("ev_reap"),
      .resolve = c.get("ev_resolve"),
      .redeliver = c.get("ev_redeliver"),
      .delivery_get = c.get("ev_delivery_get"),
      .delivery_list = c.get("ev_delivery_list"),
      .rebase_clock = c.get("ev_rebase_clock"),
      .set_shift = c.get("ev_set_shift"),
  };
}

}  // namespace

Statements::Statements(const SqlCatalog& c)
    : intake(intake_sql(c)),
      numbering(numbering_sql(c)),
      scheduling(scheduling_sql(c)),
      legacy_items(legacy_items_sql(c)),
      receipts(receipts_sql(c)),
      stock(stock_sql(c)),
      listing(listing_sql(c)),
      node_lease(node_lease_sql(c)),
      audit(audit_sql(c)),
      events(events_sql(c)),
      invariants(invariant_sql(c)),
      has_migrations_table(c.get("migrate_has_table")) {}

}  // namespace onceorder::store
