bash "$KLAP/ports/lonestar_common.sh"
