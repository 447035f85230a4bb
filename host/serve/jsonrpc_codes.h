/* JSON-RPC 2.0 and MCP error codes: the protocol's (mcp_dispatch.c,
 * serve_output.c) and no one else's. */
#ifndef JSONRPC_CODES_H
#define JSONRPC_CODES_H

#define JSONRPC_PARSE_ERROR -32700
#define JSONRPC_INVALID_REQUEST -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602
#define JSONRPC_INTERNAL_ERROR -32603
#define JSONRPC_SERVER_BUSY -32001
#define MCP_UNSUPPORTED_PROTOCOL_VERSION -32022

#endif
