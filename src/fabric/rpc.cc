#include "fabric/rpc.h"

namespace dmindex::fabric {

Status RpcRegistry::Register(RpcOpcode op, std::string name, RpcHandler handler) {
  if (op >= table_.size()) table_.resize(op + 1);
  if (table_[op].handler) {
    return Status::InvalidArgument("RPC opcode " + std::to_string(op) + " already registered by " +
                                   table_[op].name);
  }
  table_[op] = Entry{std::move(name), std::move(handler)};
  return Status::Ok();
}

bool RpcRegistry::Has(RpcOpcode op) const { return op < table_.size() && table_[op].handler; }

Status RpcRegistry::Dispatch(RpcOpcode op, RpcRequest request, RpcReply* reply) const {
  if (!Has(op)) return Status::InvalidArgument("unknown RPC opcode " + std::to_string(op));
  return table_[op].handler(request, reply);
}

}  // namespace dmindex::fabric
